# vperf_library(NAME <target> [FOLDER <name>] [DEPS <target>...] [PRIVATE_DEPS <target>...])
#
# One static library from the *.cpp files of the calling directory. Its headers keep their
# usual spelling ("events/event_spec.h") but are reachable only by the targets that link it:
# build/include/<target>/<FOLDER> is a symlink to the source directory, and that include root
# is the only one the library exports. A library that does not link vperf_symbols therefore
# cannot include "symbols/...", and a missing dependency is a compile error, not a surprise.
#
#   FOLDER        the directory name in the include spelling; defaults to the source directory's
#   DEPS          libraries this one's headers include (PUBLIC: users of this library get them)
#   PRIVATE_DEPS  libraries only this one's .cpp files include
function(vperf_library)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;FOLDER" "DEPS;PRIVATE_DEPS")
  if(NOT arg_NAME OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "vperf_library: NAME is required (unparsed: ${arg_UNPARSED_ARGUMENTS})")
  endif()
  if(NOT arg_FOLDER)
    get_filename_component(arg_FOLDER ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_library(${arg_NAME} STATIC ${sources})
  set(include_root ${PROJECT_BINARY_DIR}/include/${arg_NAME})
  # FOLDER may have a parent ("guest/recording": included as "guest/recording/x.h" while the
  # guest library's own "guest/x.h" comes from its own include root).
  get_filename_component(link_parent ${include_root}/${arg_FOLDER} DIRECTORY)
  file(MAKE_DIRECTORY ${link_parent})
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${include_root}/${arg_FOLDER} SYMBOLIC)
  target_include_directories(${arg_NAME} PUBLIC ${include_root})
  target_link_libraries(${arg_NAME} PUBLIC ${arg_DEPS} PRIVATE ${arg_PRIVATE_DEPS})
endfunction()
