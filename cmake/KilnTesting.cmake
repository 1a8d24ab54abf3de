# What every ctest entry of kiln gets, through kiln_test_properties(): a TIMEOUT, so that a hung
# test fails instead of stalling the run (ctest has no default), and in a sanitizer build the
# sanitizers' options (suppressions of the uninstrumented system libraries, see
# docs/sanitizers.md). The check_test_properties test fails when an entry has no TIMEOUT.

set(KILN_TEST_TIMEOUT 300 CACHE STRING
    "Default ctest timeout of a kiln test in seconds, before KILN_TEST_TIMEOUT_SCALE")
# Sanitizers slow the tests down (ThreadSanitizer 5-15x, and its build runs the CPU kernels on
# one thread): their builds scale every timeout. -DKILN_TEST_TIMEOUT_SCALE=<n> sets it. (The
# whole suite took 291 s under TSan on a loaded 2-core machine, its slowest test 54 s.)
if(NOT DEFINED KILN_TEST_TIMEOUT_SCALE)
  if(KILN_SANITIZE MATCHES "thread")
    set(KILN_TEST_TIMEOUT_SCALE 5)
  elseif(KILN_SANITIZE)
    set(KILN_TEST_TIMEOUT_SCALE 3)
  else()
    set(KILN_TEST_TIMEOUT_SCALE 1)
  endif()
endif()
foreach(_v KILN_TEST_TIMEOUT KILN_TEST_TIMEOUT_SCALE)
  if(NOT ${_v} MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "${_v} must be a positive whole number of seconds, got '${${_v}}'")
  endif()
endforeach()

# The sanitizers' run-time options. Prepended, so that options the user exports come later and
# win. TSan: the CPU plugin's TBB and OpenMP run on one thread in its build (see the top-level
# CMakeLists.txt); what remains of the uninstrumented libraries is suppressed by tsan.supp.
set(KILN_SANITIZER_ENVIRONMENT "")
if(KILN_SANITIZE MATCHES "thread")
  list(APPEND KILN_SANITIZER_ENVIRONMENT
       "TSAN_OPTIONS=string_prepend:suppressions=${CMAKE_CURRENT_LIST_DIR}/sanitizers/tsan.supp \
second_deadlock_stack=1 history_size=4 ")
endif()
if(KILN_SANITIZE MATCHES "address")
  # oneDNN's GNU OpenMP threads crash LeakSanitizer's exit-time tracer ("Tracer caught signal
  # 11", GCC 12): one OpenMP thread in ASan builds.
  list(APPEND KILN_SANITIZER_ENVIRONMENT
       "OMP_NUM_THREADS=set:1"
       "LSAN_OPTIONS=string_prepend:suppressions=${CMAKE_CURRENT_LIST_DIR}/sanitizers/lsan.supp ")
endif()
if(KILN_SANITIZE MATCHES "undefined")
  list(APPEND KILN_SANITIZER_ENVIRONMENT "UBSAN_OPTIONS=string_prepend:print_stacktrace=1 ")
endif()

# A sanitizer's report fails the test even where ctest judges the output, not the exit status
# (PASS_REGULAR_EXPRESSION): TSan exits with 66 after its reports, which ctest then ignores.
set(KILN_SANITIZER_REPORTS "WARNING: ThreadSanitizer:" "ERROR: AddressSanitizer:"
    "ERROR: LeakSanitizer:" "runtime error: ")

# kiln_test_properties(<test>... [TIMEOUT <seconds>]): gives the tests (of the current directory)
# a TIMEOUT of <seconds> (default KILN_TEST_TIMEOUT) times KILN_TEST_TIMEOUT_SCALE, and in a
# sanitizer build the sanitizers' options and their reports as failures. Other properties
# (ENVIRONMENT included) are left as they are: call it after set_tests_properties().
function(kiln_test_properties)
  cmake_parse_arguments(ARG "" "TIMEOUT" "" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT ${KILN_TEST_TIMEOUT})
  endif()
  math(EXPR _timeout "${ARG_TIMEOUT} * ${KILN_TEST_TIMEOUT_SCALE}")
  set_tests_properties(${ARG_UNPARSED_ARGUMENTS} PROPERTIES TIMEOUT ${_timeout}
                       KILN_TEST_PROPERTIES_SET 1)
  if(KILN_SANITIZER_ENVIRONMENT)
    set_property(TEST ${ARG_UNPARSED_ARGUMENTS} APPEND PROPERTY
                 ENVIRONMENT_MODIFICATION ${KILN_SANITIZER_ENVIRONMENT})
  endif()
  if(KILN_SANITIZE)
    set_property(TEST ${ARG_UNPARSED_ARGUMENTS} APPEND PROPERTY
                 FAIL_REGULAR_EXPRESSION ${KILN_SANITIZER_REPORTS})
  endif()
endfunction()

# kiln_directory_test_properties(): kiln_test_properties() for every test of the current directory
# that has not had it yet, keeping the TIMEOUT it was given (call it at the end of a tests'
# CMakeLists.txt, so that no add_test() can be left without a timeout).
function(kiln_directory_test_properties)
  get_property(_tests DIRECTORY PROPERTY TESTS)
  foreach(_t IN LISTS _tests)
    get_test_property(${_t} KILN_TEST_PROPERTIES_SET _done)
    if(_done)
      continue()
    endif()
    get_test_property(${_t} TIMEOUT _timeout)
    if(_timeout)
      kiln_test_properties(${_t} TIMEOUT ${_timeout})
    else()
      kiln_test_properties(${_t})
    endif()
  endforeach()
endfunction()
