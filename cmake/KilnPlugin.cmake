# kiln_add_plugin(NAME SOURCES ... [OUTPUT_DIR dir] [NO_INSTALL])
# A kiln plugin: a MODULE library that includes only the SDK headers, exports only the three
# kiln_plugin_* functions (hidden visibility), refuses undefined symbols at link time and lands in
# the plugin folder (lib/kiln/plugins) of the build tree and of the install.
function(kiln_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIR" "SOURCES" ${ARGN})
  add_library(${name} MODULE ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/sdk/include)
  target_link_options(${name} PRIVATE LINKER:-z,defs)
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${KILN_PLUGIN_OUTPUT_DIR})
  endif()
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR}
    INSTALL_RPATH "$ORIGIN/../.."  # lib/, from lib/kiln/plugins, for libraries shipped with kiln
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${name} LIBRARY DESTINATION ${KILN_PLUGIN_SUBDIR})
    set_property(GLOBAL APPEND PROPERTY KILN_PLUGIN_TARGETS ${name})  # for the kiln-plugins target
  endif()
endfunction()
