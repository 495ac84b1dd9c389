# Helpers shared by every component's CMakeLists.txt.
include(GoogleTest)

# tessera_component(NAME DEPS...): a static library `tessera_NAME` from every .cpp in the
# calling directory (globbed, so adding a file needs no CMake edit).
function(tessera_component name)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(NOT sources)  # header-only (or not yet written) component
    add_library(tessera_${name} INTERFACE)
    target_include_directories(tessera_${name} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(tessera_${name} INTERFACE ${ARGN})
    return()
  endif()
  add_library(tessera_${name} STATIC ${sources})
  target_include_directories(tessera_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(tessera_${name} PUBLIC ${ARGN})
endfunction()

# tessera_tests(NAME LABEL DEPS...): one GoogleTest executable `test_NAME` from every .cpp in
# the calling directory, registered with CTest under LABEL (unit, timing, fidelity, e2e).
function(tessera_tests name label)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(NOT sources)
    return()
  endif()
  add_executable(test_${name} ${sources})
  target_link_libraries(test_${name} PRIVATE ${ARGN} GTest::gtest GTest::gtest_main)
  target_include_directories(test_${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(test_${name} PRIVATE
      TESSERA_SOURCE_DIR="${PROJECT_SOURCE_DIR}" TESSERA_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(test_${name} PROPERTIES LABELS ${label} DISCOVERY_TIMEOUT 60)
endfunction()
