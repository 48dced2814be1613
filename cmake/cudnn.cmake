# The `cudnn` kernel (kernels/vendor/cudnn.cpp): cuDNN's RMSNorm through the cuDNN frontend.
# Included after rb_kernels is defined. Needs, at build time, only headers: the frontend
# (header-only, from the pinned nvidia-cudnn-frontend wheel that
# scripts/fetch-cudnn-frontend.sh unpacks) and cudnn.h (the CUDA toolkit's include folder).
# libcudnn is never linked: the frontend's dynamic-loading mode dlopens libcudnn.so.9 at run
# time, so the binary runs on machines without cuDNN. When a header is missing, cudnn.cpp is
# still compiled and registers the kernel as unavailable, saying why.

set(RB_CUDNN_FRONTEND_DIR "${CMAKE_BINARY_DIR}/_deps/cudnn-frontend/include"
    CACHE PATH "cuDNN frontend include folder (holds cudnn_frontend.h)")
option(RB_CUDNN_FETCH "Fetch the cuDNN frontend headers at configure time when they are missing" ON)

set(_rb_cudnn_missing "")

if(NOT EXISTS "${RB_CUDNN_FRONTEND_DIR}/cudnn_frontend.h" AND RB_CUDNN_FETCH)
  # The script unpacks the wheel's include/ into the folder above RB_CUDNN_FRONTEND_DIR.
  get_filename_component(_rb_cudnn_fetch_dest "${RB_CUDNN_FRONTEND_DIR}" DIRECTORY)
  message(STATUS "cuDNN frontend: fetching headers into ${_rb_cudnn_fetch_dest}")
  execute_process(
    COMMAND bash "${CMAKE_SOURCE_DIR}/scripts/fetch-cudnn-frontend.sh" "${_rb_cudnn_fetch_dest}"
    RESULT_VARIABLE _rb_cudnn_fetch_rc
    ERROR_VARIABLE _rb_cudnn_fetch_err)
  if(NOT _rb_cudnn_fetch_rc EQUAL 0)
    string(STRIP "${_rb_cudnn_fetch_err}" _rb_cudnn_fetch_err)
    message(WARNING "cuDNN frontend fetch failed: ${_rb_cudnn_fetch_err}")
  endif()
endif()

if(NOT EXISTS "${RB_CUDNN_FRONTEND_DIR}/cudnn_frontend.h")
  set(_rb_cudnn_missing
      "built without cuDNN: frontend headers not found in ${RB_CUDNN_FRONTEND_DIR} (run scripts/fetch-cudnn-frontend.sh, then reconfigure)")
endif()

find_path(RB_CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS}
  PATHS /usr/include /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu)
if(_rb_cudnn_missing STREQUAL "")
  if(NOT RB_CUDNN_INCLUDE_DIR)
    set(_rb_cudnn_missing "built without cuDNN: cudnn.h not found (install the cuDNN 9 headers, e.g. in the CUDA toolkit's include folder)")
  else()
    set(_rb_cudnn_version_h "${RB_CUDNN_INCLUDE_DIR}/cudnn_version.h")
    set(_rb_cudnn_major "")
    if(EXISTS "${_rb_cudnn_version_h}")
      file(STRINGS "${_rb_cudnn_version_h}" _rb_cudnn_major_line REGEX "^#define CUDNN_MAJOR [0-9]+")
      string(REGEX REPLACE "^#define CUDNN_MAJOR ([0-9]+).*" "\\1" _rb_cudnn_major "${_rb_cudnn_major_line}")
    endif()
    if(NOT _rb_cudnn_major STREQUAL "9")
      set(_rb_cudnn_missing
          "built without cuDNN: ${RB_CUDNN_INCLUDE_DIR}/cudnn.h is not cuDNN 9 (CUDNN_MAJOR '${_rb_cudnn_major}')")
    endif()
  endif()
endif()

set(_rb_cudnn_src "${CMAKE_SOURCE_DIR}/kernels/vendor/cudnn.cpp")
get_target_property(_rb_kernel_srcs rb_kernels SOURCES)
if(NOT _rb_cudnn_src IN_LIST _rb_kernel_srcs)
  target_sources(rb_kernels PRIVATE "${_rb_cudnn_src}")
endif()

if(_rb_cudnn_missing STREQUAL "")
  message(STATUS "cuDNN frontend: ${RB_CUDNN_FRONTEND_DIR}; cudnn.h: ${RB_CUDNN_INCLUDE_DIR} (libcudnn.so.9 loaded at run time)")
  # SYSTEM: the frontend's own warnings are not ours (-Wall -Wextra stays clean on our code).
  target_include_directories(rb_kernels SYSTEM PRIVATE "${RB_CUDNN_FRONTEND_DIR}" "${RB_CUDNN_INCLUDE_DIR}")
  # SKIP_JSON_LIB: no graph serialisation (unused here), half the compile time of cudnn.cpp.
  set_property(SOURCE "${_rb_cudnn_src}" APPEND PROPERTY COMPILE_DEFINITIONS
    RB_HAVE_CUDNN=1 NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING CUDNN_FRONTEND_SKIP_JSON_LIB)
  target_link_libraries(rb_kernels PUBLIC ${CMAKE_DL_LIBS})
else()
  message(WARNING "cudnn kernel unavailable: ${_rb_cudnn_missing}")
  set_property(SOURCE "${_rb_cudnn_src}" APPEND PROPERTY COMPILE_DEFINITIONS
    "RB_CUDNN_MISSING_REASON=\"${_rb_cudnn_missing}\"")
endif()
