# guide_device.cpp must be the code of section 2 of docs/writing-a-device-plugin.md, unchanged
# (after its own three comment lines), so that kiln_plugin_check_guide_device checks the device
# the guide builds.
#   cmake -DDOC=<guide.md> -DSOURCE=<guide_device.cpp> -P check_guide_device.cmake
cmake_minimum_required(VERSION 3.25)
file(READ ${DOC} doc)
string(FIND "${doc}" "## 2. The entry points and the device" at)
if(at LESS 0)
  message(FATAL_ERROR "${DOC}: no section '## 2. The entry points and the device'")
endif()
string(SUBSTRING "${doc}" ${at} -1 doc)
string(FIND "${doc}" "```cpp\n" open)
math(EXPR open "${open} + 7")
string(SUBSTRING "${doc}" ${open} -1 doc)
string(FIND "${doc}" "```\n" close)
string(SUBSTRING "${doc}" 0 ${close} code)
file(READ ${SOURCE} source)
string(FIND "${source}" "#include" first)
string(SUBSTRING "${source}" ${first} -1 source)
if(NOT source STREQUAL code)
  message(FATAL_ERROR "${SOURCE} differs from the code of section 2 of ${DOC}: copy the "
                      "guide's code into it (below its three comment lines)")
endif()
