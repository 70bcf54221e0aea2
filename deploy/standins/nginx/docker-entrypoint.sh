#!/bin/bash
# Entrypoint of the nginx stand-in: the official nginx image's template step, written anew.
#   NGINX_ENVSUBST_TEMPLATE_DIR   (/etc/nginx/templates)  where *.template files are read
#   NGINX_ENVSUBST_TEMPLATE_SUFFIX (.template)            the suffix dropped from each name
#   NGINX_ENVSUBST_OUTPUT_DIR     (/etc/nginx/conf.d)     where the results are written
#   NGINX_ENVSUBST_FILTER         (empty: every variable) regex a variable's name must match
# Then runs any executable /docker-entrypoint.d/*.sh and execs the command.
set -Eeuo pipefail

if [ "${1:-}" = nginx ] || [ "${1:-}" = nginx-debug ]; then
  template_dir="${NGINX_ENVSUBST_TEMPLATE_DIR:-/etc/nginx/templates}"
  suffix="${NGINX_ENVSUBST_TEMPLATE_SUFFIX:-.template}"
  output_dir="${NGINX_ENVSUBST_OUTPUT_DIR:-/etc/nginx/conf.d}"
  filter="${NGINX_ENVSUBST_FILTER:-}"
  if [ -d "$template_dir" ]; then
    # Only the named variables are substituted: nginx's own $variables stay as they are.
    names=""
    while IFS= read -r name; do
      if [ -z "$filter" ] || [[ "$name" =~ $filter ]]; then names="$names \${$name}"; fi
    done < <(compgen -e)
    while IFS= read -r -d '' template; do
      relative="${template#"$template_dir"/}"
      output="$output_dir/${relative%"$suffix"}"
      mkdir -p "$(dirname "$output")"
      echo "$0: rendering $template to $output"
      envsubst "$names" < "$template" > "$output"
    done < <(find "$template_dir" -follow -type f -name "*$suffix" -print0)
  fi
  for script in /docker-entrypoint.d/*.sh; do
    if [ -x "$script" ]; then "$script"; fi
  done
fi

exec "$@"
