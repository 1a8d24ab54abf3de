# Runs a libFuzzer target briefly from a small seed corpus: tar archives, or (SEEDS=self) the
# files the target writes itself (KILN_FUZZ_WRITE_SEEDS, fuzz_decoders.cpp).
#   cmake -DFUZZ=<fuzz_tar> -DWORK=<folder> [-DSEEDS=self] [-DSECONDS=20] -P run_fuzz.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/seeds)
if(NOT SECONDS)
  set(SECONDS 20)
endif()
get_filename_component(name ${FUZZ} NAME)
if(SEEDS STREQUAL "self")
  set(ENV{KILN_FUZZ_WRITE_SEEDS} ${WORK}/seeds)
else()
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
endif()
execute_process(COMMAND ${FUZZ} -max_total_time=${SECONDS} -rss_limit_mb=2048 -timeout=10
                        ${WORK}/corpus ${WORK}/seeds
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${name} failed (${rc}):\n${err}")
endif()
string(REGEX MATCH "Done [0-9]+ runs" runs "${err}")
message("${name}: ${runs}")
