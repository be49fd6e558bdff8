# Included by ctest after the discovered doctest cases (tests/CMakeLists.txt): the unit cases whose
# name says "(test venv" probe the pip wheels of the test venvs, so they require the cli.venvs fixture.
foreach(_cudadiag_case IN LISTS cudadiag_unit_tests_TESTS)
  if(_cudadiag_case MATCHES "\\(test venv")
    set_tests_properties("${_cudadiag_case}" PROPERTIES FIXTURES_REQUIRED cudadiag_test_venvs)
  endif()
endforeach()
