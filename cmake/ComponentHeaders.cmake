# ec_headers(TARGET FOLDER [EXCLUDE SUBFOLDER...])
#
# Makes `#include "FOLDER/..."` resolve for TARGET and for every target that
# links it, and for nobody else. There is no global include path: each target
# gets its own include root under build/include/TARGET/ holding a symlink to
# its source folder, so including a component you do not link fails to compile
# — the build graph is the architecture (docs/layout.md, "Dependencies").
#
# FOLDER is relative to the repository root (src/ is dropped from the include
# path: src/store -> "store/..."). EXCLUDE names subfolders that are targets of
# their own (store/postgres inside store): the folder is then mirrored entry by
# entry, leaving those out.
#
# OPTIONS_OF names EXCLUDEd subfolders whose options headers (*_options.h:
# plain data, standard and other options headers only, scripts/check-deps.py)
# TARGET exposes all the same: a backend's options sit beside it
# (storage/s3/s3_storage_options.h) but belong to its seam's target, so
# config/ fills them without linking, or building, the backend.
function(ec_headers target folder)
  cmake_parse_arguments(H "" "" "EXCLUDE;OPTIONS_OF" ${ARGN})
  string(REGEX REPLACE "^src/" "" include_path "${folder}")
  set(root ${CMAKE_BINARY_DIR}/include/${target})
  set(source_dir ${CMAKE_SOURCE_DIR}/${folder})
  get_filename_component(parent ${root}/${include_path} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  # A build folder made before the component's EXCLUDE list changed holds the
  # other shape (one link vs. a folder of links). Remove it first: writing
  # links "into" an old folder link would replace the sources with links to
  # themselves.
  if(IS_SYMLINK ${root}/${include_path})
    file(REMOVE ${root}/${include_path})
  elseif(IS_DIRECTORY ${root}/${include_path})
    file(REMOVE_RECURSE ${root}/${include_path})
  endif()
  if(NOT H_EXCLUDE)
    if(IS_DIRECTORY ${root}/${include_path} AND NOT IS_SYMLINK ${root}/${include_path})
      file(REMOVE_RECURSE ${root}/${include_path})  # mirrored entry by entry before
    endif()
    file(CREATE_LINK ${source_dir} ${root}/${include_path} SYMBOLIC)
  else()
    # A build folder configured before the EXCLUDE holds a symlink to the whole
    # source folder here: replace it, or the links below would be made inside
    # the source folder itself, each file replaced by a link to itself.
    if(IS_SYMLINK ${root}/${include_path})
      file(REMOVE ${root}/${include_path})
    endif()
    file(MAKE_DIRECTORY ${root}/${include_path})
    # CONFIGURE_DEPENDS: a header added later re-runs CMake so it gets its link.
    file(GLOB entries RELATIVE ${source_dir} CONFIGURE_DEPENDS ${source_dir}/*)
    foreach(entry ${entries})
      if(NOT entry IN_LIST H_EXCLUDE)
        file(CREATE_LINK ${source_dir}/${entry} ${root}/${include_path}/${entry} SYMBOLIC)
      endif()
    endforeach()
    foreach(sub ${H_OPTIONS_OF})
      if(NOT sub IN_LIST H_EXCLUDE)
        message(FATAL_ERROR "ec_headers(${target}): OPTIONS_OF ${sub} must be EXCLUDEd too")
      endif()
      file(MAKE_DIRECTORY ${root}/${include_path}/${sub})
      file(GLOB options RELATIVE ${source_dir}/${sub} CONFIGURE_DEPENDS
           ${source_dir}/${sub}/*_options.h)
      foreach(header ${options})
        file(CREATE_LINK ${source_dir}/${sub}/${header} ${root}/${include_path}/${sub}/${header}
             SYMBOLIC)
      endforeach()
    endforeach()
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${root})
  else()
    target_include_directories(${target} PUBLIC ${root})
  endif()
endfunction()
