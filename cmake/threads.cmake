# Threads for the core's pool (cpp/src/thread_pool.cpp, set_threads).
# Natively: the platform's threads. Under Emscripten, only the threaded
# flavour (ATTN_WASM_THREADS) is built with -pthread: shared memory and
# atomics in every object of the library and of what links it; the
# single-thread flavours keep set_threads at 1.
option(ATTN_WASM_THREADS "Under Emscripten: the threaded flavour (pthreads, shared memory)" OFF)

if(EMSCRIPTEN)
  if(ATTN_WASM_THREADS)
    target_compile_options(attnscope PUBLIC -pthread)
    target_link_options(attnscope PUBLIC -pthread)
  endif()
else()
  set(THREADS_PREFER_PTHREAD_FLAG ON)
  find_package(Threads REQUIRED)
  target_link_libraries(attnscope PUBLIC Threads::Threads)
endif()

# Link options of a wasm program of the threaded flavour: the glue starts
# Module.attnscopeWorkers web workers (the core's pool threads: set_threads(n)
# needs n for n > 1) before the module is ready, so that starting a thread never
# waits for the browser's event loop; asking for more fails instead of
# deadlocking (PTHREAD_POOL_SIZE_STRICT=2). Its files are named
# attnscope-threads.{mjs,wasm,worker.js}: the glue differs from the
# single-thread flavours' and sits beside them in dist/.
function(attn_wasm_thread_options target)
  if(EMSCRIPTEN AND ATTN_WASM_THREADS)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME attnscope-threads)
    target_link_options(${target} PRIVATE "-sPTHREAD_POOL_SIZE=Module.attnscopeWorkers||0"
                        -sPTHREAD_POOL_SIZE_STRICT=2 -Wno-pthreads-mem-growth)
  endif()
endfunction()

# How long the pool's threads poll before they sleep (cpp/src/thread_pool.cpp,
# kSpin, 0 by default); empty keeps the source's value. For measuring one against another.
set(ATTN_POOL_SPIN_US "" CACHE STRING "Microseconds the pool's threads poll before sleeping (empty: the default)")
if(NOT ATTN_POOL_SPIN_US STREQUAL "")
  set_source_files_properties(${PROJECT_SOURCE_DIR}/cpp/src/thread_pool.cpp PROPERTIES COMPILE_DEFINITIONS
                              "ATTN_POOL_SPIN_US=${ATTN_POOL_SPIN_US}")
endif()
