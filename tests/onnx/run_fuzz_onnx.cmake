# Runs fuzz_onnx_load briefly from seeds: small models of ONNX's backend test data (opsets 6 to
# 17).
#   cmake -DFUZZ=<fuzz_onnx_load> -DWORK=<folder> -DTESTDATA=<data-dir> [-DSECONDS=20]
#         -P run_fuzz_onnx.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT SECONDS)
  set(SECONDS 20)
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/seeds)
foreach(test test_add_bcast test_gemm_all_attributes test_conv_with_autopad_same
             test_convtranspose_pads test_reshape_negative_extended_dims test_slice_neg_steps
             test_gather_negative_indices test_constant test_constantofshape_int_zeros
             test_batchnorm_epsilon test_maxpool_2d_same_lower test_averagepool_2d_pads
             test_layer_normalization_2d_axis0_expanded test_cast_FLOAT_to_DOUBLE
             test_split_variable_parts_2d test_pad test_range_float_type_positive_delta_expanded
             test_clip_default_inbounds test_reduce_sum_keepdims_random test_where_example)
  if(EXISTS ${TESTDATA}/node/${test}/model.onnx)
    file(COPY_FILE ${TESTDATA}/node/${test}/model.onnx ${WORK}/seeds/${test}.onnx)
    file(GLOB _pb ${TESTDATA}/node/${test}/test_data_set_0/input_0.pb)
    if(_pb)
      file(COPY_FILE ${_pb} ${WORK}/seeds/${test}_input_0.pb)
    endif()
  endif()
endforeach()
# older opsets, which go through ONNX's shape inference and version converter
foreach(test pytorch-converted/test_Softmin pytorch-converted/test_Conv2d pytorch-operator/test_operator_mm
             pytorch-converted/test_PReLU_1d_multiparam node/test_upsample_nearest)
  if(EXISTS ${TESTDATA}/${test}/model.onnx)
    string(REPLACE "/" "_" _seed ${test})
    file(COPY_FILE ${TESTDATA}/${test}/model.onnx ${WORK}/seeds/${_seed}.onnx)
  endif()
endforeach()
execute_process(COMMAND ${FUZZ} -max_total_time=${SECONDS} -rss_limit_mb=2048 -timeout=30
                        -max_len=65536 ${WORK}/corpus ${WORK}/seeds
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
get_filename_component(name ${FUZZ} NAME)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${name} failed (${rc}):\n${err}")
endif()
string(REGEX MATCH "Done [0-9]+ runs" runs "${err}")
message("${name}: ${runs}")
