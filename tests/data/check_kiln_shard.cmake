# kiln-shard on a folder of 30 samples, 8 per shard: 4 shards; then re-sharding them into 2.
#   cmake -DKILN_SHARD=<kiln-shard> -DWORK=<folder> -P check_kiln_shard.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/out)
foreach(i RANGE 29)
  string(LENGTH "${i}" n)
  set(key "${i}")
  if(n EQUAL 1)
    set(key "0${i}")
  endif()
  file(WRITE ${WORK}/in/${key}.txt "sample ${i}")
  file(WRITE ${WORK}/in/${key}.cls "${i}")
endforeach()
execute_process(COMMAND ${KILN_SHARD} --from dir:${WORK}/in --out ${WORK}/out/a-%02d.tar
                        --max-count 8
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "kiln-shard: 30 samples, [0-9]+ bytes of fields, 4 shards")
  message(FATAL_ERROR "kiln-shard (folder) failed: ${rc}\n${out}\n${err}")
endif()
execute_process(COMMAND ${KILN_SHARD} --from "tar:${WORK}/out/a-{00..03}.tar"
                        --out ${WORK}/out/b-%d.tar --max-count 15 --shuffle 10
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "30 samples, [0-9]+ bytes of fields, 2 shards from 4")
  message(FATAL_ERROR "kiln-shard (re-shard) failed: ${rc}\n${out}\n${err}")
endif()
execute_process(COMMAND ${KILN_SHARD} --from nosuch:x --out ${WORK}/x-%d.tar
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "no data source for scheme 'nosuch'")
  message(FATAL_ERROR "kiln-shard should fail on an unknown scheme: ${rc}\n${err}")
endif()
message("${out}")
