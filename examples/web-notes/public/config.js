// Runtime configuration of the notes demo. `setup.py` overwrites dist/config.js with the IDs
// it created; query parameters (?endpoint=&project=&database=&table=&bucket=) override both.
// An empty endpoint means "the server that served this page": <origin>/v1.
window.WEB_NOTES_CONFIG = {
  endpoint: '',
  project: '',
  database: 'webnotes',
  table: 'notes',
  bucket: 'attachments',
};
