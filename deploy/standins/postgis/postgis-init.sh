#!/bin/bash
# What the postgis image does on first start: a template_postgis database, and the PostGIS
# extensions loaded into it and into POSTGRES_DB.
set -e
psql -v ON_ERROR_STOP=1 --dbname "$POSTGRES_DB" <<<'CREATE DATABASE template_postgis IS_TEMPLATE true;'
for db in template_postgis "$POSTGRES_DB"; do
  psql -v ON_ERROR_STOP=1 --dbname "$db" <<'SQL'
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS postgis_topology;
CREATE EXTENSION IF NOT EXISTS fuzzystrmatch;
CREATE EXTENSION IF NOT EXISTS postgis_tiger_geocoder;
SQL
done
