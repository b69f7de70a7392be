# Checks that an instruction set's kernel object (kernels_<ISA>.cpp.o) defines
# no weak attnscope symbol outside its own inline namespace isa_<ISA>: such a
# symbol would have the same name in the baseline objects and the linker
# could keep either copy. The dispatched functors' operator()<Arch> are the
# exception by design: they are explicit instantiations for this set's Arch,
# which only this object emits.
# Usage: cmake -DNM=<nm> -DISA=<avx2|avx512> "-DOBJECTS=<a|b|...>" -P check_isa_symbols.cmake
string(REPLACE "|" ";" objects "${OBJECTS}")
set(object "")
foreach(candidate ${objects})
  if(candidate MATCHES "kernels_${ISA}\\.cpp\\.o(bj)?$")
    set(object "${candidate}")
  endif()
endforeach()
if(NOT object)
  message(FATAL_ERROR "no kernels_${ISA} object among: ${OBJECTS}")
endif()

execute_process(COMMAND "${NM}" -C "${object}" OUTPUT_VARIABLE symbols RESULT_VARIABLE nm_result)
if(NOT nm_result EQUAL 0)
  message(FATAL_ERROR "${NM} -C ${object} failed (${nm_result})")
endif()

string(REPLACE "\n" ";" lines "${symbols}")
set(own 0)
set(strays "")
foreach(line ${lines})
  if(NOT line MATCHES "^[0-9a-fA-F]* *[WV] (.*attnscope::.*)$")
    continue()
  endif()
  set(name "${CMAKE_MATCH_1}")
  if(name MATCHES "attnscope::kernels::isa_${ISA}::")
    math(EXPR own "${own} + 1")
  elseif(NOT name MATCHES "^[^(]*attnscope::kernels::[A-Za-z]+Kernel::operator\\(\\)<")
    string(APPEND strays "\n  ${name}")
  endif()
endforeach()

if(strays)
  message(FATAL_ERROR "weak symbols of ${object} outside isa_${ISA}:${strays}")
endif()
if(own EQUAL 0)
  message(FATAL_ERROR "${object} has no weak symbol in isa_${ISA}: is ATTN_KERNEL_ISA set?")
endif()
message(STATUS "kernels_${ISA}: ${own} weak symbols, all in isa_${ISA}")
