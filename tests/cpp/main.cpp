// The Catch2 runner lives alone in this file: it is the slow translation unit
// to compile, and keeping it apart lets the test files rebuild quickly.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
