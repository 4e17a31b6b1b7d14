// The HTTP API from the page: one fetch wrapper on the page's own origin.
//
//   const api = new Api({key});            // key: an API key, or null (local mode)
//   await api.get('/v1/stats', {user: 'demo'});
//   await api.post('/v1/docs/travel/diff', body, {user: 'demo'});
//
// A key goes as `Authorization: Bearer <key>` (what server/auth.py reads). Every error answer
// of the API has the shape {error, message, details?}; it is thrown as an ApiError carrying
// `status`, `error` (the server's error class), `message` and `details`; a 409 is a
// ConflictError (a version conflict, or `busy` for a run already going). A failed connection
// is an ApiError with status 0. Query values that are null, undefined or '' are left out.

export class ApiError extends Error {
  constructor(status, error, message, details) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.error = error;
    this.details = details ?? null;
  }
}

/** A 409: someone else changed the item meanwhile (or a run of it is under way). */
export class ConflictError extends ApiError {
  constructor(status, error, message, details) {
    super(status, error, message, details);
    this.name = 'ConflictError';
  }

  get busy() {
    return this.error === 'BusyError';
  }
}

export function queryString(query) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query || {})) {
    if (value === null || value === undefined || value === '') continue;
    if (Array.isArray(value)) {
      if (value.length) params.set(name, value.join(','));
    } else {
      params.set(name, String(value));
    }
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

async function errorOf(response) {
  let body = null;
  try {
    body = await response.json();
  } catch (_) {
    body = null;
  }
  const error = (body && body.error) || `HTTP${response.status}`;
  const message = (body && body.message) || response.statusText || `HTTP ${response.status}`;
  const details = body ? body.details : null;
  const Cls = response.status === 409 ? ConflictError : ApiError;
  return new Cls(response.status, error, message, details);
}

export class Api {
  /** base: the API's origin and path prefix ('' for the page's own origin). */
  constructor({ base = '', key = null } = {}) {
    this.base = base.replace(/\/$/, '');
    this.key = key;
  }

  headers(extra) {
    const headers = { Accept: 'application/json', ...(extra || {}) };
    if (this.key) headers.Authorization = `Bearer ${this.key}`;
    return headers;
  }

  url(path, query) {
    return `${this.base}${path}${queryString(query)}`;
  }

  /** The raw Response of a request (for streams such as a run's events); errors thrown. */
  async fetch(method, path, { query, body, signal, headers } = {}) {
    const init = { method, headers: this.headers(headers), signal, credentials: 'same-origin' };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers['Content-Type'] = 'application/json';
    }
    let response;
    try {
      response = await fetch(this.url(path, query), init);
    } catch (exc) {
      if (exc && exc.name === 'AbortError') throw exc;
      throw new ApiError(0, 'NetworkError', String((exc && exc.message) || exc), null);
    }
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  /** A stream (text/event-stream) as a raw Response, e.g. a run's events. */
  stream(path, { query, signal } = {}) {
    return this.fetch('GET', path, { query, signal, headers: { Accept: 'text/event-stream' } });
  }

  /** The decoded JSON answer of a request (null for 204). */
  async request(method, path, options = {}) {
    const response = await this.fetch(method, path, options);
    if (response.status === 204) return null;
    const type = response.headers.get('Content-Type') || '';
    return type.includes('json') ? response.json() : response.text();
  }

  get(path, query, options = {}) {
    return this.request('GET', path, { ...options, query });
  }

  post(path, body, query, options = {}) {
    return this.request('POST', path, { ...options, body, query });
  }

  put(path, body, query, options = {}) {
    return this.request('PUT', path, { ...options, body, query });
  }

  patch(path, body, query, options = {}) {
    return this.request('PATCH', path, { ...options, body, query });
  }

  delete(path, query, options = {}) {
    return this.request('DELETE', path, { ...options, query });
  }

  /** Every item of a paged list ({items, next_cursor}), up to `max` items. */
  async all(path, query, { max = 10000, signal } = {}) {
    const items = [];
    let cursor = null;
    do {
      const page = await this.get(path, { ...query, cursor }, { signal });
      items.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor && items.length < max);
    return items;
  }
}
