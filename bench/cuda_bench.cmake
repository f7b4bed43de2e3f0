# The CUDA backend benchmarks (bench/cuda_bench.cc), included from bench/CMakeLists.txt. They need a GPU
# at run time and skip with the driver's reason without one.
if(TARGET quiesce::cuda)
  add_executable(cuda_bench "${CMAKE_CURRENT_LIST_DIR}/cuda_bench.cc")
  target_link_libraries(cuda_bench PRIVATE quiesce::cuda benchmark::benchmark quiesce_warnings quiesce_allocator)
endif()
