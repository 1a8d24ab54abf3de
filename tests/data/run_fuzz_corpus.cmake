# Runs a libFuzzer target briefly from a folder of seed inputs.
#   cmake -DFUZZ=<target> -DSEEDS=<folder> -DWORK=<folder> [-DSECONDS=20] -P run_fuzz_corpus.cmake
# (-timeout=60: an expansion near the caps costs about a second of CPU under ASan, several
# times that on a loaded machine; a hang still fails)
cmake_minimum_required(VERSION 3.25)
if(NOT SECONDS)
  set(SECONDS 20)
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus)
execute_process(COMMAND ${FUZZ} -max_total_time=${SECONDS} -rss_limit_mb=2048 -timeout=60
                        ${WORK}/corpus ${SEEDS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
get_filename_component(name ${FUZZ} NAME)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${name} failed (${rc}):\n${err}")
endif()
string(REGEX MATCH "Done [0-9]+ runs" runs "${err}")
message("${name}: ${runs}")
