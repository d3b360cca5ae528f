# memopt_op_files(OPS_DIR EXCLUDE_REGEX PARAMETER TEMPLATE OUTPUT): generates the list of
# registration functions of the op files under OPS_DIR/<family>/<file>.cc (lib/ops and cuda/ops).
# Every such file whose name does not match EXCLUDE_REGEX (tests, helpers) defines the function
# <family>_<file>(PARAMETER) in namespace op_files; TEMPLATE receives their declarations
# (@MEMOPT_OP_FILE_DECLS@) and calls with the argument `registry` (@MEMOPT_OP_FILE_CALLS@), in path
# order, and is written to OUTPUT; @MEMOPT_OP_FILE_NAMED_CALLS@ has the same calls, each after
# `registry.BeginOpFile("<family>", "<file>");`. A file without its function is a link error.
function(memopt_op_files ops_dir exclude_regex parameter template output)
  file(GLOB op_files CONFIGURE_DEPENDS ${ops_dir}/*/*.cc)
  list(FILTER op_files EXCLUDE REGEX "${exclude_regex}")
  list(SORT op_files)
  set(MEMOPT_OP_FILE_DECLS "")
  set(MEMOPT_OP_FILE_CALLS "")
  set(MEMOPT_OP_FILE_NAMED_CALLS "")
  foreach(op_file IN LISTS op_files)
    get_filename_component(op_stem ${op_file} NAME_WE)
    get_filename_component(op_dir ${op_file} DIRECTORY)
    get_filename_component(op_family ${op_dir} NAME)
    string(APPEND MEMOPT_OP_FILE_DECLS "void ${op_family}_${op_stem}(${parameter});\n")
    string(APPEND MEMOPT_OP_FILE_CALLS "  op_files::${op_family}_${op_stem}(registry);\n")
    string(APPEND MEMOPT_OP_FILE_NAMED_CALLS "  registry.BeginOpFile(\"${op_family}\", \"${op_stem}\");\n"
           "  op_files::${op_family}_${op_stem}(registry);\n")
  endforeach()
  configure_file(${template} ${output} @ONLY)
endfunction()
