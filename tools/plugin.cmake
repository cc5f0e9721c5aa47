# Tools that need MPI and HDF5.
add_executable(tagg-demo ${CMAKE_CURRENT_SOURCE_DIR}/demo/tagg_demo.c)
target_link_libraries(tagg-demo PRIVATE tagg::hdf5)
install(TARGETS tagg-demo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# tagg-bench: HDF5 I/O kernels (1D array, HACC-IO, S3D-IO, column blocks, h5bench VPIC-IO) on MPI-IO, subfiling and tagg.
add_executable(tagg-bench
  ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench.c ${CMAKE_CURRENT_SOURCE_DIR}/bench/opts.c
  ${CMAKE_CURRENT_SOURCE_DIR}/bench/variants.c ${CMAKE_CURRENT_SOURCE_DIR}/bench/kernels.c
  ${CMAKE_CURRENT_SOURCE_DIR}/bench/kernel_array1d.c ${CMAKE_CURRENT_SOURCE_DIR}/bench/kernel_hacc.c
  ${CMAKE_CURRENT_SOURCE_DIR}/bench/kernel_s3d.c ${CMAKE_CURRENT_SOURCE_DIR}/bench/kernel_columns.c
  ${CMAKE_CURRENT_SOURCE_DIR}/bench/kernel_vpic.c
  ${CMAKE_CURRENT_SOURCE_DIR}/bench/util.c ${CMAKE_CURRENT_SOURCE_DIR}/common/drop_caches.c)
target_link_libraries(tagg-bench PRIVATE tagg::hdf5 m)
target_include_directories(tagg-bench PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/common)
install(TARGETS tagg-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# tagg-calibrate: measured tier file for the model (issue 5).
add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/tagg-calibrate ${CMAKE_CURRENT_BINARY_DIR}/tagg-calibrate)

# libtagg-mpicount: counts the synchronising MPI calls of any MPI program and
# the time in them (PMPI; LD_PRELOAD it). Profiling aid for tagg-bench runs.
add_library(tagg-mpicount SHARED ${CMAKE_CURRENT_SOURCE_DIR}/mpicount/mpicount.c)
target_link_libraries(tagg-mpicount PRIVATE MPI::MPI_C)
