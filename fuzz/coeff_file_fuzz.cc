// libFuzzer target of the coefficients reader: ParseCoeffFile on arbitrary bytes, for every
// model's layout. An InputError is the expected answer to bad input; anything else escaping
// (another exception, a crash, a sanitizer report, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/common/error.h"
#include "src/io/coeff_file.h"
#include "src/models/aerial.h"
#include "src/models/ball.h"
#include "src/models/ground.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  struct Model {
    const char* name;
    const rlfit::CoeffLayout& layout;
  };
  for (const Model& m : {Model{"aerial", rlfit::AerialLayout()},
                         Model{"ground", rlfit::GroundLayout()},
                         Model{"ball", rlfit::BallLayout()}}) {
    try {
      const rlfit::CoeffFile file = rlfit::ParseCoeffFile("fuzz.json", text, m.name, m.layout);
      // What was accepted must also be written (the writer re-reads its own text).
      (void)rlfit::CoeffFileToJson(file, m.layout).dump();
    } catch (const rlfit::InputError&) {
    }
  }
  return 0;
}
