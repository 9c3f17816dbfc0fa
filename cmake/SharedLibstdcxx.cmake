# opkit_link_shared_libstdcxx(TARGET): links TARGET against the shared libstdc++ (libstdc++.so.6)
# even where the compiler would link the static archive.
#
# Why: a Python extension (and the CLI, into which libraries loaded at run time bring
# libstdc++.so.6) must share the process's C++ runtime. PyTorch, CuPy and others load
# libstdc++.so.6; a second, static copy inside the extension breaks its locale-dependent code (a
# null facet in std::ostream's number formatting, seen as SIGSEGV after `import torch`). g++ links
# libstdc++.a when the first libstdc++.so on its search path is missing or a dangling symlink, as in
# a relocated toolchain (/opt/gcc with -B pointing at a copy of gcc's library directory). Naming the
# shared library on the link line resolves every symbol before the driver's implicit -lstdc++.
function(opkit_link_shared_libstdcxx target)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()  # clang with libc++, or another runtime: nothing to do
  endif()
  execute_process(
    COMMAND "${CMAKE_CXX_COMPILER}" -print-file-name=libstdc++.so
    OUTPUT_VARIABLE from_compiler
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  # EXISTS follows symlinks: a dangling libstdc++.so (the case above) does not count.
  if(IS_ABSOLUTE "${from_compiler}" AND EXISTS "${from_compiler}")
    set(shared "${from_compiler}")
  else()
    find_library(OPKIT_SHARED_LIBSTDCXX NAMES libstdc++.so.6 HINTS ${CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES})
    set(shared "${OPKIT_SHARED_LIBSTDCXX}")
  endif()
  if(shared AND EXISTS "${shared}")
    target_link_libraries(${target} PRIVATE "${shared}")
  else()
    message(WARNING "no shared libstdc++ (libstdc++.so.6) found for ${CMAKE_CXX_COMPILER}: ${target} may carry a "
                    "static copy, which crashes in processes that also load libstdc++.so.6 (PyTorch)")
  endif()
endfunction()
