# Runs the libFuzzer target of the ELF header reader briefly, seeded with the header of a real
# library and with headers for other machines (AArch64, 32-bit x86, big-endian s390).
#   cmake -DFUZZ=<fuzz_elf> -DWORK=<folder> -DSEED=<a shared library> -P run_fuzz_elf.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/seeds)
execute_process(COMMAND head -c 64 ${SEED} OUTPUT_FILE ${WORK}/seeds/library_header)
# e_ident (magic, class, byte order, version, padding), e_type 3 (shared object), e_machine
set(pad "\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00")
set(seeds
  "\\x7fELF\\x02\\x01\\x01${pad}\\x03\\x00\\xb7\\x00"   # AArch64
  "\\x7fELF\\x01\\x01\\x01${pad}\\x03\\x00\\x03\\x00"   # 32-bit x86
  "\\x7fELF\\x02\\x02\\x01${pad}\\x00\\x03\\x00\\x16")  # s390x, big-endian
set(i 0)
foreach(seed IN LISTS seeds)
  execute_process(COMMAND printf "${seed}" OUTPUT_FILE ${WORK}/seeds/header_${i})
  math(EXPR i "${i} + 1")
endforeach()
execute_process(COMMAND ${FUZZ} -max_total_time=20 -rss_limit_mb=2048 -timeout=10
                        ${WORK}/corpus ${WORK}/seeds
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzz_elf failed (${rc}):\n${err}")
endif()
string(REGEX MATCH "Done [0-9]+ runs" runs "${err}")
message("fuzz_elf: ${runs}")
