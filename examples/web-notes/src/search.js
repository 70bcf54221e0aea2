// The search box: every typed word must appear in the note's title or body, inside a word or at
// its start, ignoring case and accents ("bon" finds "Lisbon", "pasteis" finds "pastéis").
//
// Done in the demo, not in the server's queries: Appwrite's `search` is a full-text query whose
// words match whole words or their starts, and its `contains` compares the stored text as it is;
// this server keeps both meanings. So each note also stores `searchText`, its title and body
// folded (lower case, accents removed), and a typed word, folded the same way, is a `contains`
// on that column. Notes saved before `searchText` existed are still found by the full-text
// `search` on `title` and `body` (word starts).
import { Query } from 'appwrite';

const MAX_WORDS = 8;

/** ``text`` in lower case without accents (NFD, combining marks dropped): "Pastéis" -> "pasteis". */
export function fold(text) {
  return (text || '').normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase();
}

/** The words of ``text``, lower-cased (letters, digits, underscore: the server’s \w). */
export function searchWords(text) {
  return (text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) || []).slice(0, MAX_WORDS);
}

/** The ``searchText`` column of a note: its folded title and body. */
export function searchText(title, body) {
  return fold(`${title || ''}\n${body || ''}`);
}

/** One query per word: ``contains`` on ``searchText`` (inside words, no accents), or ``search``
 * on the title or the body (each needs its fulltext index; setup.py creates them). The list's
 * queries are ANDed, so every word must match. */
export function searchQueries(text) {
  return searchWords(text).map((word) => Query.or([
    Query.contains('searchText', fold(word)), Query.search('title', word), Query.search('body', word),
  ]));
}

/** Whether ``row`` matches ``text`` as the list's queries do; used for rows that arrive by
 * realtime or are created on this page. */
export function matchesSearch(row, text) {
  const folded = searchText(row.title, row.body);
  return searchWords(text).every((w) => folded.includes(fold(w)));
}
