# The compiler's layers, one CMake library each. A layer's target_link_libraries ARE the
# dependency graph drawn in docs/ARCHITECTURE.md; the build enforces it: before a layer compiles,
# cmake/check_layer_includes.cmake reads every #include "..." of the layer's files and fails the
# build when one names a header of a layer the layer does not depend on (directly or through its
# dependencies), with the file, the line and the layers it may use.
#
#   magneto_layer(NAME                       layer name, e.g. passes (target magneto_passes)
#                 [INTERFACE]                header-only layer
#                 DIRS dir...                folders of its sources and private headers
#                 HEADERS dir...             folders of its public headers (checked too)
#                 DEPS layer...              the layers it uses (magneto_<layer> targets)
#                 LIBS target...)            outside libraries (fmt::fmt, onnx, ...)
#
# Tests and tools are not layers: they may include any layer they link.

set(MAGNETO_LAYER_CHECK ${CMAKE_CURRENT_LIST_DIR}/check_layer_includes.cmake)

function(magneto_layer name)
  cmake_parse_arguments(L "INTERFACE" "" "DIRS;HEADERS;DEPS;LIBS" ${ARGN})
  set(target magneto_${name})
  # Transitive dependencies: what this layer may include.
  set(allowed ${name})
  foreach(d IN LISTS L_DEPS)
    if(NOT TARGET magneto_${d})
      message(FATAL_ERROR "layer ${name}: depends on ${d}, which is not defined yet (define layers bottom up)")
    endif()
    get_property(dallowed GLOBAL PROPERTY MAGNETO_LAYER_ALLOWED_${d})
    list(APPEND allowed ${dallowed})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY MAGNETO_LAYER_ALLOWED_${name} "${allowed}")

  set(files)
  foreach(d IN LISTS L_DIRS L_HEADERS)
    file(GLOB_RECURSE f CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${d}/*.cpp ${CMAKE_SOURCE_DIR}/${d}/*.h
         ${CMAKE_SOURCE_DIR}/${d}/*.cuh)
    list(APPEND files ${f})
  endforeach()
  set(sources ${files})
  list(FILTER sources INCLUDE REGEX "\\.cpp$")

  # The include check, as a build step the library depends on.
  set(stamp ${CMAKE_BINARY_DIR}/layer_checks/${name}.ok)
  string(REPLACE ";" "," allowed_arg "${allowed}")
  set(list_file ${CMAKE_BINARY_DIR}/layer_checks/${name}.files)
  string(REPLACE ";" "\n" files_text "${files}")
  file(WRITE ${list_file}.tmp "${files_text}\n")
  configure_file(${list_file}.tmp ${list_file} COPYONLY)  # rewritten only when the list changes
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DLAYER=${name} -DALLOWED=${allowed_arg} -DFILES=${list_file}
            -DROOT=${CMAKE_SOURCE_DIR} -DSTAMP=${stamp} -P ${MAGNETO_LAYER_CHECK}
    DEPENDS ${files} ${list_file} ${MAGNETO_LAYER_CHECK}
    COMMENT "Checking layer ${name}: includes only ${allowed_arg}"
    VERBATIM)
  add_custom_target(${target}_layer_check DEPENDS ${stamp})

  if(L_INTERFACE)
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  else()
    if(NOT sources)
      message(FATAL_ERROR "layer ${name}: no sources in ${L_DIRS}")
    endif()
    add_library(${target} STATIC ${sources})
    set(scope PUBLIC)
    target_compile_definitions(${target} PRIVATE
      MAGNETO_SOURCE_DIR="${CMAKE_SOURCE_DIR}" MAGNETO_VERSION="${PROJECT_VERSION}")
  endif()
  add_dependencies(${target} ${target}_layer_check)
  foreach(d IN LISTS L_DEPS)
    target_link_libraries(${target} ${scope} magneto_${d})
  endforeach()
  if(L_LIBS)
    target_link_libraries(${target} ${scope} ${L_LIBS})
  endif()
  set_property(GLOBAL APPEND PROPERTY MAGNETO_LAYERS ${name})
endfunction()
