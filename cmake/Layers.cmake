# The library is built from layers (docs/design.md, "Layers and targets"). Each layer is an OBJECT
# library compiled with only its own folder and the public headers (include/ and the generated
# build/include) on its include path; its objects go into the one library users link, `opkit`
# (alias opkit::opkit). A layer reaches another layer's internals only through an interface that
# the other layer declares header by header (opkit_layer_interface) and the first one links, so
# every remaining edge between layers is written down in the CMakeLists of the layer it leaves.
#
# One archive rather than one per layer: the core's registry creates the built-in backends
# (make_cuda_backend(), make_cpu_backend(): src/backend/backend.hpp), so symbols cross layers in
# both directions; inside one archive the linker resolves them whatever the link order,
# and nothing relies on static initialisers (which a static link drops when nothing references
# their object).

# opkit_add_layer(<name> <source>...): a layer of `opkit`, built from sources in the current folder.
function(opkit_add_layer name)
  add_library(${name} OBJECT ${ARGN})
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE opkit_public_headers opkit_warnings)
  target_compile_definitions(${name} PRIVATE OPKIT_WITH_CUDA=$<BOOL:${OPKIT_WITH_CUDA}>
                                             OPKIT_WITH_CPU_BACKEND=$<BOOL:${OPKIT_WITH_CPU_BACKEND}>)
  target_sources(opkit PRIVATE $<TARGET_OBJECTS:${name}>)
endfunction()

# opkit_layer_interface(<name> [BASE <folder under src/>] HEADERS <header>...): an INTERFACE target
# through which other layers include these internal headers (paths relative to src/ or to BASE,
# spelled as the includers spell them) and no others. The headers are linked into a folder of their own under the build tree, so the
# includers' include path gains exactly these files; a header they include must be listed too.
function(opkit_layer_interface name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "BASE" "HEADERS")
  set(base "${PROJECT_SOURCE_DIR}/src")
  if(arg_BASE)
    set(base "${base}/${arg_BASE}")
  endif()
  set(root "${PROJECT_BINARY_DIR}/layer_interfaces/${name}")
  file(REMOVE_RECURSE "${root}")  # a header dropped from the list must not stay reachable
  foreach(header IN LISTS arg_HEADERS)
    if(NOT EXISTS "${base}/${header}")
      message(FATAL_ERROR "opkit_layer_interface(${name}): ${base}/${header} does not exist")
    endif()
    get_filename_component(folder "${root}/${header}" DIRECTORY)
    file(MAKE_DIRECTORY "${folder}")
    file(CREATE_LINK "${base}/${header}" "${root}/${header}" SYMBOLIC)
  endforeach()
  add_library(${name} INTERFACE)
  target_include_directories(${name} INTERFACE "$<BUILD_INTERFACE:${root}>")
endfunction()
