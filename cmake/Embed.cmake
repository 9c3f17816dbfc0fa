# Kernels are data: .cu/.cuh files are embedded into the library as strings at build time and
# compiled at run time. Each directory calls opkit_embed(<logical name> <file>); the top level
# calls opkit_write_embedded(<target>) once, which generates one source with the lookup table.

function(opkit_embed logical_name file)
  get_filename_component(abs "${file}" ABSOLUTE)
  set_property(GLOBAL APPEND PROPERTY OPKIT_EMBEDDED "${logical_name}=${abs}")
endfunction()

function(opkit_write_embedded target)
  get_property(entries GLOBAL PROPERTY OPKIT_EMBEDDED)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/opkit_embedded_sources.cpp")
  set(deps "")
  foreach(entry IN LISTS entries)
    string(REGEX REPLACE "^[^=]*=" "" path "${entry}")
    list(APPEND deps "${path}")
  endforeach()
  string(REPLACE ";" "|" encoded "${entries}")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${out}" "-DENTRIES=${encoded}" -P "${PROJECT_SOURCE_DIR}/cmake/embed_sources.cmake"
    DEPENDS ${deps} "${PROJECT_SOURCE_DIR}/cmake/embed_sources.cmake"
    COMMENT "Embedding kernel sources"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
