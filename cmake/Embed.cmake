# Kernels are data: .cu/.cuh files are embedded into the library as strings at build time and
# compiled at run time. Each layer embeds its own files and reads them through its own table, so
# no layer reaches into another's sources:
#
#   opkit_embed(<target> <logical name> <file>)   once per file, in the layer's directory
#   opkit_write_embedded(<target>)                once, after every opkit_embed of <target>
#
# The second generates, in the target's build directory, opkit_embedded.hpp (declaring
# opkit::detail::embedded_source, in an inline namespace named after the target so that the
# layers' tables are distinct symbols in one archive) and the source holding the table.

function(opkit_embed target logical_name file)
  get_filename_component(abs "${file}" ABSOLUTE)
  set_property(TARGET ${target} APPEND PROPERTY OPKIT_EMBEDDED "${logical_name}=${abs}")
endfunction()

function(opkit_write_embedded target)
  get_target_property(entries ${target} OPKIT_EMBEDDED)
  if(NOT entries)
    message(FATAL_ERROR "opkit_write_embedded(${target}): nothing was embedded with opkit_embed(${target} ...)")
  endif()
  string(MAKE_C_IDENTIFIER "${target}" scope)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded")
  set(out "${dir}/opkit_embedded.cpp")
  set(deps "")
  foreach(entry IN LISTS entries)
    string(REGEX REPLACE "^[^=]*=" "" path "${entry}")
    list(APPEND deps "${path}")
  endforeach()
  string(REPLACE ";" "|" encoded "${entries}")
  add_custom_command(
    OUTPUT "${out}" "${dir}/opkit_embedded.hpp"
    COMMAND ${CMAKE_COMMAND} "-DOUTPUT_DIR=${dir}" "-DSCOPE=${scope}" "-DENTRIES=${encoded}"
            -P "${PROJECT_SOURCE_DIR}/cmake/embed_sources.cmake"
    DEPENDS ${deps} "${PROJECT_SOURCE_DIR}/cmake/embed_sources.cmake"
    COMMENT "Embedding the kernel sources of ${target}"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}" "${dir}/opkit_embedded.hpp")
  target_include_directories(${target} PRIVATE "${dir}")
endfunction()
