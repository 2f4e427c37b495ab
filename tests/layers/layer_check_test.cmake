# Test of cmake/check_layer_includes.cmake (the build's layer check), cmake -P with -DROOT=source
# dir -DWORK=scratch dir: a file of layer ir that includes a passes header (an upward edge) and one
# that reaches a runtime/cpu header through a relative path must fail the check, naming the file,
# the line and the layer; a file that includes only ir, support and runtime_common must pass.
cmake_minimum_required(VERSION 3.20)
set(check ${ROOT}/cmake/check_layer_includes.cmake)
file(REMOVE_RECURSE ${WORK})
# Files placed in the source tree's layout (ROOT is a scratch copy of the folder names only).
set(fake ${WORK}/root)
file(MAKE_DIRECTORY ${fake}/src/ir ${fake}/runtime/cpu ${fake}/runtime/common)
file(WRITE ${fake}/runtime/cpu/mg_kernels.h "#pragma once\n")
file(WRITE ${fake}/runtime/common/k_nn_shapes.h "#pragma once\n")

function(run_check name content expect_ok expect_text)
  file(WRITE ${fake}/src/ir/${name}.cpp "${content}")
  file(WRITE ${WORK}/${name}.files "${fake}/src/ir/${name}.cpp\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -DLAYER=ir -DALLOWED=ir,support,runtime_common
                          -DFILES=${WORK}/${name}.files -DROOT=${fake} -DSTAMP=${WORK}/${name}.ok
                          -P ${check}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect_ok AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: the check failed on a clean file:\n${out}${err}")
  endif()
  if(NOT expect_ok AND rc EQUAL 0)
    message(FATAL_ERROR "${name}: the check passed a file that breaks the layering")
  endif()
  if(NOT expect_ok AND NOT "${err}" MATCHES "${expect_text}")
    message(FATAL_ERROR "${name}: the error does not say '${expect_text}':\n${err}")
  endif()
  message(STATUS "${name}: ok")
endfunction()

run_check(clean "#include \"magneto/ir/graph.h\"\n#include \"magneto/support/status.h\"\n#include \"k_nn_shapes.h\"\n#include <vector>\n"
          TRUE "")
run_check(upward "// a comment\n#include \"magneto/ir/graph.h\"\n#include \"magneto/passes/passes.h\"\n"
          FALSE "src/ir/upward.cpp:3: includes \"magneto/passes/passes.h\" of layer passes")
run_check(relative "#include \"../../runtime/cpu/mg_kernels.h\"\n"
          FALSE "src/ir/relative.cpp:1: includes \"../../runtime/cpu/mg_kernels.h\" of layer runtime_cpu")
run_check(bare_runtime "#include \"mg_kernels.h\"\n"
          FALSE "includes \"mg_kernels.h\" of layer runtime_cpu")
