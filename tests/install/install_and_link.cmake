# SPDX-License-Identifier: Apache-2.0
# Script mode: install, configure the example against the installed package, build, run.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "failed (${code}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
run(${CMAKE_COMMAND} -S "${EXAMPLE_DIR}" -B "${WORK_DIR}/example" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" -C "${FLAGS_FILE}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/example")
execute_process(COMMAND "${WORK_DIR}/example/softmax_shapes" RESULT_VARIABLE code
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(code EQUAL 77)
  message("SKIPPED: the example linked against the installed kjit, but there is no GPU to run it on")
  file(WRITE "${WORK_DIR}/skipped" "no GPU\n")  # the test's shell turns this into exit 77
elseif(NOT code EQUAL 0)
  message(FATAL_ERROR "the example failed with exit code ${code}")
endif()
