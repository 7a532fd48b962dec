import { errorResult, type Handler } from '../src/domain/contract.js';

/** listPets: GET /pets. A page of animals by ascending id, with a `Link rel="next"` while more exist. */
export const listPets: Handler<'listPets'> = async ({ query }, { pets, cursors, basePath }) => {
  const limit = query.limit ?? 20;
  let afterId: number | undefined;
  if (query.cursor !== undefined) {
    const position = cursors.decode(query.cursor);
    if (!position) {
      return errorResult('validation_failed', 'The cursor was not issued by this service.', [{ in: 'query', field: 'cursor', message: 'is not a cursor this service issued' }]);
    }
    if (position.status !== query.status) {
      return errorResult('validation_failed', 'The cursor belongs to a different status filter.', [{ in: 'query', field: 'cursor', message: 'must be used with the status filter it was issued for' }]);
    }
    afterId = position.afterId;
  }
  const page = await pets.list({ limit, status: query.status, afterId });
  if (!page.hasMore || page.lastId === undefined) return { status: 200, body: page.pets, headers: {} };
  const next = new URLSearchParams({ limit: String(limit) });
  if (query.status) next.set('status', query.status);
  next.set('cursor', cursors.encode({ afterId: page.lastId, status: query.status }));
  return { status: 200, body: page.pets, headers: { Link: `<${basePath}/pets?${next.toString()}>; rel="next"` } };
};
