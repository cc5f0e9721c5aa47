# Tools that need MPI and HDF5.
add_executable(tagg-demo ${CMAKE_CURRENT_SOURCE_DIR}/demo/tagg_demo.c)
target_link_libraries(tagg-demo PRIVATE tagg::hdf5)
install(TARGETS tagg-demo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
