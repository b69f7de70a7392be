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
