# Layer check (cmake -P): fails when a file of layer LAYER includes a header of a layer outside
# ALLOWED (comma-separated: the layer and everything it depends on). See cmake/MagnetoLayers.cmake.
#   -DLAYER=name -DALLOWED=a,b,c -DFILES=list-file -DROOT=source-dir -DSTAMP=file-written-on-success
#
# Which layer a header belongs to:
#   "magneto/X/..."  -> layer X (the public headers in include/magneto/X/);
#   any other name   -> resolved like the compiler would: next to the including file, then in
#                       runtime/common and runtime/cpu (the runtime's include folders); the layer
#                       is the one owning the folder the file lies in (table below).
# An include that resolves to no file of the source tree is not a layer edge (system, generated).
cmake_minimum_required(VERSION 3.20)
string(REPLACE "," ";" allowed "${ALLOWED}")
file(STRINGS "${FILES}" files)

# Folder -> layer, most specific first.
set(owners
  "include/magneto/support/=support"
  "runtime/common/=runtime_common"
  "runtime/cpu/=runtime_cpu"
  "runtime/gpu/=runtime_gpu"
  "src/ir/=ir" "src/ops/=ir" "include/magneto/ir/=ir"
  "src/interp/=interp" "include/magneto/interp/=interp"
  "src/target/=target" "include/magneto/target/=target"
  "src/analysis/=analysis" "include/magneto/analysis/=analysis"
  "passes/=passes" "include/magneto/passes/=passes"
  "src/frontend/=frontend" "include/magneto/frontend/=frontend"
  "codegen/=codegen" "include/magneto/codegen/=codegen"
  "src/driver/=driver" "include/magneto/driver/=driver")

function(owner_of path out)
  file(RELATIVE_PATH rel "${ROOT}" "${path}")
  foreach(o IN LISTS owners)
    string(REPLACE "=" ";" pair "${o}")
    list(GET pair 0 prefix)
    list(GET pair 1 layer)
    string(LENGTH "${prefix}" n)
    string(SUBSTRING "${rel}" 0 ${n} head)
    if(head STREQUAL prefix)
      set(${out} ${layer} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

set(errors "")
foreach(f IN LISTS files)
  if(f STREQUAL "")
    continue()
  endif()
  file(STRINGS "${f}" lines)
  get_filename_component(fdir "${f}" DIRECTORY)
  set(lineno 0)
  foreach(line IN LISTS lines)
    math(EXPR lineno "${lineno} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"")
      continue()
    endif()
    set(inc "${CMAKE_MATCH_1}")
    set(layer "")
    if(inc MATCHES "^magneto/([a-z_]+)/")
      set(layer "${CMAKE_MATCH_1}")
    else()
      foreach(dir "${fdir}" "${ROOT}/runtime/common" "${ROOT}/runtime/cpu")
        if(EXISTS "${dir}/${inc}")
          get_filename_component(resolved "${dir}/${inc}" REALPATH)
          owner_of("${resolved}" layer)
          break()
        endif()
      endforeach()
    endif()
    if(layer STREQUAL "")
      continue()
    endif()
    list(FIND allowed "${layer}" at)
    if(at EQUAL -1)
      file(RELATIVE_PATH rel "${ROOT}" "${f}")
      string(APPEND errors "  ${rel}:${lineno}: includes \"${inc}\" of layer ${layer}\n")
    endif()
  endforeach()
endforeach()

if(NOT errors STREQUAL "")
  string(REPLACE ";" ", " may "${allowed}")
  message(FATAL_ERROR "layer ${LAYER} includes a layer it does not depend on:\n${errors}"
    "Layer ${LAYER} may include only: ${may}.\nMove the shared piece down to a layer both use, "
    "or add the dependency in CMakeLists.txt (and to docs/ARCHITECTURE.md's picture) if the edge "
    "belongs in the design.")
endif()
file(WRITE "${STAMP}" "ok\n")
