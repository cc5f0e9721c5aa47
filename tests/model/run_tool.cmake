# Runs TOOL with ARGS; checks the exit status equals RC (so a crash, which
# gives a signal, fails) and that stdout+stderr match REGEX.
execute_process(COMMAND ${TOOL} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${rc}" STREQUAL "${RC}")
  message(FATAL_ERROR "exit status '${rc}', expected ${RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT "${out}${err}" MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
