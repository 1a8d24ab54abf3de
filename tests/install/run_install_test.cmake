# The install test, run by ctest as `cmake -P`:
#   1. cmake --install the build tree into WORK_DIR/prefix and check the layout;
#   2. configure and build the consumer project against it (find_package(kiln), kiln::core);
#   3. run the consumer and the installed kiln-info with no KILN_PLUGIN_PATH, LD_LIBRARY_PATH or
#      KILN_DEVICE: each must find libkiln_core and, through it, the installed plugins; and the
#      README's `KILN_DEVICE=<type> kiln-curve-fit` with the installed program;
#   4. move the prefix elsewhere: the installed kiln-info must still run ($ORIGIN RPATHs).
# Inputs: BUILD_DIR CONSUMER_DIR WORK_DIR CXX EXPECT_CPU SANITIZE LIBDIR
cmake_minimum_required(VERSION 3.25)

set(prefix ${WORK_DIR}/prefix)
set(clean_env ${CMAKE_COMMAND} -E env --unset=KILN_PLUGIN_PATH --unset=LD_LIBRARY_PATH
              --unset=KILN_DEVICE)

# Runs a command; fails the test with its output when it fails; returns its stdout in out_var.
function(run out_var)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

function(expect text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected '${regex}' in:\n${text}")
  endif()
endfunction()

# --- 1. install ----------------------------------------------------------------------------------
file(REMOVE_RECURSE ${WORK_DIR})
run(out ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
set(must_exist
  include/kiln/kiln.h include/kiln/plugin.h include/kiln/sdk/plugin.h include/kiln/sdk/kernel.hpp
  ${LIBDIR}/libkiln_core.so ${LIBDIR}/cmake/kiln/kilnConfig.cmake
  ${LIBDIR}/cmake/kiln/kilnConfigVersion.cmake ${LIBDIR}/cmake/kiln/kilnTargets.cmake
  bin/kiln-info bin/kiln-plugin-check bin/kiln-curve-fit)
if(EXPECT_CPU)
  list(APPEND must_exist ${LIBDIR}/kiln/plugins/kiln_cpu.so)
endif()
foreach(f IN LISTS must_exist)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install lacks ${f}:\n${out}")
  endif()
endforeach()
if(NOT IS_SYMLINK ${prefix}/${LIBDIR}/libkiln_core.so)
  message(FATAL_ERROR "lib/libkiln_core.so is not the symlink to the versioned library")
endif()
file(GLOB test_plugins ${prefix}/${LIBDIR}/kiln/plugins/null.so)
if(test_plugins)
  message(FATAL_ERROR "test plugins were installed: ${test_plugins}")
endif()

# --- 2. build the consumer against the install --------------------------------------------------
set(flags "")
if(SANITIZE)
  string(REPLACE "," ";" sanitizers "${SANITIZE}")
  foreach(s IN LISTS sanitizers)
    string(APPEND flags " -fsanitize=${s}")
  endforeach()
endif()
run(out ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer -DCMAKE_BUILD_TYPE=Release
        -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_CXX_FLAGS=${flags}")
run(out ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)

# --- 3. run it and the installed kiln-info with a clean environment ----------------------------
set(plugin_dir "${prefix}/${LIBDIR}/kiln/plugins")
if(EXPECT_CPU)
  run(out ${clean_env} ${WORK_DIR}/consumer/kiln-consumer --expect-cpu)
  expect("${out}" "device: cpu:0\n" "kiln-consumer")
  expect("${out}" "sum of squares: 14\n" "kiln-consumer")
else()
  run(out ${clean_env} ${WORK_DIR}/consumer/kiln-consumer)
endif()
expect("${out}" "search: ${plugin_dir}\n" "kiln-consumer (libkiln_core from the install)")
run(info ${clean_env} ${prefix}/bin/kiln-info)
expect("${info}" "plugin search path, in order:\n  ${plugin_dir}[\n ]" "installed kiln-info")
if(EXPECT_CPU)
  expect("${info}" "file: +${plugin_dir}/kiln_cpu\\.so\n(    [^\n]*\n)*    state: +loaded\n"
         "installed kiln-info")
endif()
if(EXPECT_CPU)
  run(out ${CMAKE_COMMAND} -E env --unset=KILN_PLUGIN_PATH --unset=LD_LIBRARY_PATH KILN_DEVICE=cpu
          ${prefix}/bin/kiln-curve-fit)
  expect("${out}" "device cpu:0,[^\n]*\n[^\n]*\nclose to \\[5, 0, 3\\]: yes"
         "KILN_DEVICE=cpu kiln-curve-fit (README)")
endif()

# --- 4. the install is relocatable -------------------------------------------------------------
file(RENAME ${prefix} ${WORK_DIR}/moved)
run(info ${clean_env} ${WORK_DIR}/moved/bin/kiln-info)
expect("${info}" "\n  ${WORK_DIR}/moved/${LIBDIR}/kiln/plugins[\n ]" "kiln-info in a moved install")
file(REMOVE_RECURSE ${WORK_DIR})
message("install test passed: ${prefix}")
