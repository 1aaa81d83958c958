// doctest next to Ceres: glog (pulled in by Ceres) defines CHECK too. Include this after the
// Ceres headers so CHECK is doctest's in the test bodies.
#pragma once

#include <ceres/ceres.h>

#include <doctest/doctest.h>

#undef CHECK
#define CHECK DOCTEST_CHECK
