# Runs kiln-checkerboard-ddp on 2 ranks through kiln-launch and checks that each rank reports
# its epochs and that the replicas end equal.
#   cmake -DLAUNCH=<kiln-launch> -DPROGRAM=<kiln-checkerboard-ddp> -DWORK=<folder> -DPORT=<port>
#         -P check_checkerboard_ddp.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${LAUNCH} --nproc-per-node 2 --master-port ${PORT} ${PROGRAM}
                        --shards ${WORK} --epochs 2 --samples 32 --size 8 --batch 4
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kiln-launch exited with ${rc}")
endif()
foreach(expected "\\[rank0\\]: wrote 4 shards" "\\[rank0\\]: epoch 2: [1-9]"
        "\\[rank1\\]: epoch 2: [1-9]" "\\[rank0\\]: last epoch's loss, mean over 2 ranks"
        "\\[rank0\\]: replicas equal: yes" "\\[rank1\\]: replicas equal: yes")
  if(NOT "${out}${err}" MATCHES "${expected}")
    message(FATAL_ERROR "not in the output: ${expected}")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
