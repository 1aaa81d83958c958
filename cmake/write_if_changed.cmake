# rlfit_write_if_changed(path content): writes `content` to `path` only when the file is missing
# or holds something else, so an unchanged generated file keeps its time stamp and recompiles
# nothing. Shared by the configure-time generators (cmake/model_folders.cmake,
# cmake/committed_fits.cmake) and the build-time script cmake/git_revision.cmake (-P mode).
function(rlfit_write_if_changed path content)
  set(previous "")
  if(EXISTS "${path}")
    file(READ "${path}" previous)
  endif()
  if(NOT previous STREQUAL content)
    file(WRITE "${path}" "${content}")
  endif()
endfunction()
