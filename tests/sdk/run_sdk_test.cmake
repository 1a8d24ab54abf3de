# The SDK test, run by ctest as `cmake -P`:
#   1. cmake --install the build tree into WORK_DIR/prefix (the SDK headers, the CMake package
#      with kiln_add_plugin, the pkg-config files);
#   2. configure, build and install tests/sdk/project against it: the example plugins land in the
#      install's plugin folder; each carries the ABI stamp;
#   3. the installed kiln-info lists the plugins as loaded, with the ref device, and the
#      installed kiln-plugin-check passes ref (conformance, gradients, dtypes against the CPU)
#      and null (no kernels: everything through CPU fallback);
#   4. the curve fit of "Effective PyTorch" trains on ref with KILN_DEVICE=ref (default_device()
#      picks it);
#   5. sdk-consumer: devices, moves, CPU fallback, the csv source through a DataLoader, a module
#      moved to ref trains, the solo communication backend runs a world of one;
#   6. the csv plugin built with `c++ $(pkg-config --cflags --libs kiln-sdk)` loads too.
# Inputs: BUILD_DIR SOURCE_DIR WORK_DIR CXX SANITIZE LIBDIR
cmake_minimum_required(VERSION 3.25)

set(prefix ${WORK_DIR}/prefix)
set(plugin_dir ${prefix}/${LIBDIR}/kiln/plugins)
set(clean_env ${CMAKE_COMMAND} -E env --unset=KILN_PLUGIN_PATH --unset=LD_LIBRARY_PATH
              --unset=KILN_DEVICE)

function(run out_var)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected '${regex}' in:\n${text}")
  endif()
endfunction()

# --- 1. install kiln ---------------------------------------------------------------------------
file(REMOVE_RECURSE ${WORK_DIR})
run(out ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/kiln/sdk/plugin.h include/kiln/sdk/kernel.hpp include/kiln/sdk/source.hpp
          include/kiln/sdk/host.hpp ${LIBDIR}/cmake/kiln/KilnPlugin.cmake
          ${LIBDIR}/pkgconfig/kiln.pc ${LIBDIR}/pkgconfig/kiln-sdk.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()

# --- 2. build the example plugins out of tree and install them ----------------------------------
set(flags "")
if(SANITIZE)
  string(REPLACE "," ";" sanitizers "${SANITIZE}")
  foreach(s IN LISTS sanitizers)
    string(APPEND flags " -fsanitize=${s}")
  endforeach()
endif()
run(out ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/sdk/project -B ${WORK_DIR}/project
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DKILN_SOURCE_DIR=${SOURCE_DIR}
        -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_CXX_FLAGS=-Wall -Wextra ${flags}"
        "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG")  # -O1: a quicker build, fast enough to train
run(out ${CMAKE_COMMAND} --build ${WORK_DIR}/project --parallel 2)
if(out MATCHES "warning:")
  message(FATAL_ERROR "the examples build with warnings:\n${out}")
endif()
run(out ${CMAKE_COMMAND} --install ${WORK_DIR}/project)
foreach(p kiln_ref kiln_null kiln_csv kiln_solo)
  if(NOT EXISTS ${plugin_dir}/${p}.so)
    message(FATAL_ERROR "kiln_add_plugin did not install ${p}.so into ${plugin_dir}:\n${out}")
  endif()
  # the section's string may follow other bytes without a NUL in between: match its end
  file(STRINGS ${plugin_dir}/${p}.so stamp REGEX "kiln plugin ABI [0-9]+\\.[0-9]+$")
  string(REGEX MATCH "kiln plugin ABI [0-9]+\\.[0-9]+$" stamp "${stamp}")
  if(NOT stamp)
    message(FATAL_ERROR "${p}.so carries no ABI stamp")
  endif()
endforeach()
file(STRINGS ${SOURCE_DIR}/sdk/include/kiln/sdk/plugin.h abi REGEX "^#define KILN_ABI_M")
string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*" "\\1.\\2" abi "${abi}")
if(NOT stamp STREQUAL "kiln plugin ABI ${abi}")
  message(FATAL_ERROR "the ABI stamp '${stamp}' is not the SDK's ${abi}")
endif()

# --- 3. kiln-info lists them --------------------------------------------------------------------
run(info ${clean_env} ${prefix}/bin/kiln-info)
foreach(p ref null csv solo)
  expect("${info}" "file: +${plugin_dir}/kiln_${p}\\.so\n    name: +${p}\n(    [^\n]*\n)*    state: +loaded\n"
         "kiln-info")
endforeach()
expect("${info}" "ref:0[^\n]*reference device" "kiln-info (devices)")
expect("${info}" "communication backends \\([0-9]+\\):\n(  [^\n]*\n)*  solo  available \\(${plugin_dir}/kiln_solo\\.so\\)"
       "kiln-info (communication backends)")

# --- 3b. the installed kiln-plugin-check passes the ref device --------------------------------
run(out ${clean_env} ${prefix}/bin/kiln-plugin-check ${plugin_dir}/kiln_ref.so)
expect("${out}" "all checks passed: kiln runs every operator on ref:0 as on the CPU"
       "kiln-plugin-check kiln_ref.so")
expect("${out}" "gradients, by operator: [1-9][0-9]* passed, 0 failed" "kiln-plugin-check")

# --- 3c. ... and the null device, the template: no kernel, every operator on the CPU ------------
run(out ${clean_env} ${prefix}/bin/kiln-plugin-check ${plugin_dir}/kiln_null.so)
expect("${out}" "    kernels \\(0\\):" "kiln-plugin-check kiln_null.so (no kernels)")
expect("${out}" "all checks passed: kiln runs every operator on null:0 as on the CPU"
       "kiln-plugin-check kiln_null.so")

# --- 4. the curve fit on ref: the installed program, as the README and the guide run it --
run(out ${CMAKE_COMMAND} -E env --unset=KILN_PLUGIN_PATH KILN_DEVICE=ref
        ${prefix}/bin/kiln-curve-fit)
expect("${out}" "device ref:0," "curve fit with KILN_DEVICE=ref")
expect("${out}" "close to \\[5, 0, 3\\]: yes" "curve fit on ref")

# --- 5. the consumer ------------------------------------------------------------------------------
run(out ${clean_env} ${WORK_DIR}/project/sdk-consumer --default=cpu:0 ${WORK_DIR}/consumer)
expect("${out}" "sdk-consumer: all checks passed" "sdk-consumer")
message("${out}")

# --- 6. a plugin built with pkg-config -----------------------------------------------------------
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
  run(sdk_flags ${PKG_CONFIG} --cflags --libs kiln-sdk)
  run(pc_plugin_dir ${PKG_CONFIG} --variable=plugindir kiln-sdk)
  run(pc_libdir ${PKG_CONFIG} --variable=libdir kiln)
  string(STRIP "${pc_plugin_dir}" pc_plugin_dir)
  string(STRIP "${pc_libdir}" pc_libdir)
  if(NOT EXISTS ${pc_plugin_dir}/kiln_ref.so OR NOT EXISTS ${pc_libdir}/libkiln_core.so)
    message(FATAL_ERROR "pkg-config's plugindir '${pc_plugin_dir}' or libdir '${pc_libdir}' is "
                        "not the install's")
  endif()
  separate_arguments(sdk_flags UNIX_COMMAND "${sdk_flags}")
  separate_arguments(san UNIX_COMMAND "${flags}")
  run(out ${CXX} -std=c++20 -O1 -shared -fPIC ${san} ${SOURCE_DIR}/sdk/examples/csv-source/csv_source.cpp
          -o ${WORK_DIR}/csv_pkgconfig.so ${sdk_flags})
  run(info ${clean_env} ${prefix}/bin/kiln-info --plugin ${WORK_DIR}/csv_pkgconfig.so)
  expect("${info}" "file: +${WORK_DIR}/csv_pkgconfig\\.so\n    name: +csv\n(    [^\n]*\n)*    state: +loaded\n"
         "kiln-info on the pkg-config build")
else()
  message("pkg-config not found: the pkg-config build was not tried")
endif()

file(REMOVE_RECURSE ${WORK_DIR})
message("SDK test passed")
