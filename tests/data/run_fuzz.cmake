# Runs the libFuzzer target briefly from a small seed corpus of tar archives.
#   cmake -DFUZZ=<fuzz_tar> -DWORK=<folder> -P run_fuzz.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/seeds)
# Seeds: tar archives made with CMake's own tar (ustar, gnu and pax formats).
file(WRITE ${WORK}/src/000001.txt "hello")
file(WRITE ${WORK}/src/000001.cls "3")
file(WRITE ${WORK}/src/000002.seg.png "not really a png")
file(WRITE ${WORK}/src/__meta__/x.json "{}")
foreach(format gnutar pax paxr)
  execute_process(COMMAND ${CMAKE_COMMAND} -E tar cf ${WORK}/seeds/seed_${format}.tar
                          --format=${format} 000001.txt 000001.cls 000002.seg.png __meta__
                  WORKING_DIRECTORY ${WORK}/src RESULT_VARIABLE rc)
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E tar czf ${WORK}/seeds/seed.tar.gz 000001.txt
                        000001.cls WORKING_DIRECTORY ${WORK}/src)
execute_process(COMMAND ${FUZZ} -max_total_time=20 -rss_limit_mb=2048 -timeout=10
                        ${WORK}/corpus ${WORK}/seeds
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzz_tar failed (${rc}):\n${err}")
endif()
string(REGEX MATCH "Done [0-9]+ runs" runs "${err}")
message("fuzz_tar: ${runs}")
