# Runs kiln-info with every test plugin on KILN_PLUGIN_PATH, in text and in JSON, and checks what
# it says about each of them (other files in the folder are not checked). All load into one
# process, in file-name order, so duplicate_device (which registers "null") comes before null.so,
# and null.so is the one refused.
# Then kiln-info on static_throws.so, whose static constructor throws inside dlopen: the process
# stops (see Note [Exceptions from plugins] in core/src/plugin_loader.cpp), naming the file.
#   cmake -DKILN_INFO=<kiln-info> -DPLUGIN_DIR=<build>/tests/plugins
#         -DSTATIC_THROWS=<build>/tests/plugins-fatal/static_throws.so
#         [-DCPU_PLUGIN=<kiln_cpu.so>] -P check_kiln_info.cmake
cmake_minimum_required(VERSION 3.25)

# file name -> state kiln-info must report
set(expected
  abi_major.so=refused abi_minor_newer.so=refused abi_minor_older.so=loaded
  bad_calls.so=loaded bad_query.so=refused duplicate_device.so=loaded
  duplicate_kernel.so=refused garbage.so=load\ failed good.so=loaded
  init_fails.so=refused init_throws.so=refused missing_dep.so=load\ failed
  not_a_plugin.so=load\ failed null.so=refused probe_says_no.so=not\ available
  init_throws_int.so=refused registers_all_fails.so=refused takes_cpu.so=refused
  absent_gpu.so=not\ available named_by_file.so=loaded describe_throws.so=loaded)

function(run_kiln_info out_var)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env --unset=KILN_DEVICE KILN_PLUGIN_PATH=${PLUGIN_DIR}
            ${KILN_INFO} ${ARGN}
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kiln-info ${ARGN} exited with ${rc}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

function(expect text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "kiln-info's output does not match '${regex}':\n${text}")
  endif()
endfunction()

# --- text -----------------------------------------------------------------------------------
run_kiln_info(text)
expect("${text}" "kiln core: plugin ABI [0-9]+\\.[0-9]+\n")
expect("${text}" "plugin search path, in order:\n  ${PLUGIN_DIR}\n")
foreach(entry IN LISTS expected)
  string(REPLACE "=" ";" pair "${entry}")
  list(GET pair 0 file)
  list(GET pair 1 state)
  string(REPLACE "." "\\." file_re "${file}")
  # the plugin's own lines are indented by 4, the next "  file:" by 2
  expect("${text}" "file: +[^\n]*/${file_re}\n(    [^\n]*\n)*    state: +${state}\n")
endforeach()
expect("${text}" "reason: +registration failed: init_fails: the device's firmware is missing")
expect("${text}" "reason: +[^\n]*libkiln_test_absent\\.so: cannot open shared object file")
expect("${text}" "reason: +[^\n]*'null' is already registered by [^\n]*duplicate_device\\.so")
set(int_reason "it let a C\\+\\+ exception cross the C boundary \\(an exception of type int,")
expect("${text}" "reason: +${int_reason} not a std::exception\\)")
set(cpu_reason "registration failed: register_device\\('cpu'\\): the device type 'cpu'")
expect("${text}" "reason: +${cpu_reason} is kiln's own[^\n]*takes_cpu\\.so")
# takes_cpu.so comes before kiln's plugin folder in the search, and kiln's CPU plugin still wins
if(CPU_PLUGIN)
  expect("${text}" "file: +${CPU_PLUGIN}\n(    [^\n]*\n)*    state: +loaded\n    devices: cpu\n")
endif()
expect("${text}" "\n  testdev:0  testdev:0 \\(host memory, test device\\)\n")
expect("${text}" "\n  describe_throws:0  \\(no description: [^\n]*describe_throws\\.so let an")
expect("${text}" "\n  neg +[^\n]*testdev")
expect("${text}" "composite \\(all devices\\)")

# --- JSON: parsed with CMake's own JSON reader --------------------------------------------------
run_kiln_info(json --json)
string(JSON n_plugins LENGTH "${json}" plugins)
math(EXPR last "${n_plugins} - 1")
set(n_test_plugins 0)
foreach(i RANGE ${last})
  string(JSON path GET "${json}" plugins ${i} file)
  string(JSON state GET "${json}" plugins ${i} state)
  get_filename_component(dir "${path}" DIRECTORY)
  get_filename_component(file "${path}" NAME)
  if(NOT dir STREQUAL PLUGIN_DIR)
    continue()  # a real plugin, from the folder next to libkiln_core
  endif()
  if(NOT "${expected}" MATCHES "(^|;)${file}=")
    continue()  # not one of the loader's test plugins (a stale file, another area's plugin)
  endif()
  math(EXPR n_test_plugins "${n_test_plugins} + 1")
  if(NOT "${file}=${state}" IN_LIST expected)
    message(FATAL_ERROR "kiln-info --json: ${file} is '${state}', expected one of: ${expected}")
  endif()
endforeach()
list(LENGTH expected n_expected)
if(NOT n_test_plugins EQUAL n_expected)
  message(FATAL_ERROR "kiln-info --json lists ${n_test_plugins} of the ${n_expected} test plugins")
endif()
string(JSON abi_major GET "${json}" core_abi major)
string(JSON n_ops LENGTH "${json}" operators)
string(JSON first_op GET "${json}" operators 0 name)
string(JSON n_devices LENGTH "${json}" devices)
if(n_ops LESS 10 OR first_op STREQUAL "" OR n_devices LESS 3 OR NOT abi_major GREATER 0)
  message(FATAL_ERROR "kiln-info --json: unexpected operators, devices or ABI:\n${json}")
endif()
message("kiln-info --json: ${n_plugins} plugins, ${n_devices} devices, ${n_ops} operators")

# --- a static constructor that throws -----------------------------------------------------------
# Either the exception comes out of dlopen (the file is listed as "load failed" and kiln-info goes
# on), or dlopen cannot pass it and the process stops: then the message must name the file.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env --unset=KILN_DEVICE KILN_PLUGIN_PATH=${PLUGIN_DIR}
          ${KILN_INFO} --plugin ${STATIC_THROWS}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(why "\\(std::runtime_error: static_throws: no configuration file\\)")
if(rc EQUAL 0)
  set(listed "file: +${STATIC_THROWS}\n    state: +load failed\n    reason: +cannot load: a")
  expect("${out}" "${listed} static constructor of the library threw while it was [^\n]*${why}")
  expect("${out}" "file: +[^\n]*/good\\.so\n(    [^\n]*\n)*    state: +loaded\n")
  message("kiln-info on static_throws.so: went on, listing it as load failed")
else()
  set(fatal "kiln: fatal: a static constructor of the plugin file ${STATIC_THROWS} threw while")
  expect("${err}" "${fatal} the library was being opened ${why}")
  message("kiln-info on static_throws.so: stopped (${rc}), naming the file and the exception")
endif()
