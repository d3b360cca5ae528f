# Unfinished work (issues 3, 4, 5, 7) that is committed but not built until it is verified.
# memopt_wip_filter(VAR) removes those sources from the list in VAR. See wip/README.md.
function(memopt_wip_filter var)
  set(files ${${var}})
  list(FILTER files EXCLUDE REGEX "/lib/(exec|plan|rewrite|grad)/")
  list(FILTER files EXCLUDE REGEX "/lib/report/(activations|candidate_subgraph|dot|extract|timeline_[a-z_]+)(_test)?\\.cc$")
  list(FILTER files EXCLUDE REGEX "/tools/memopt/(cmd_apply|cmd_bench|cmd_grad|cmd_plan|cmd_run|gates|run_inputs|scan_views|timeline_output|version_info)\\.cc$")
  set(${var} ${files} PARENT_SCOPE)
endfunction()
