import { ApiError, type ApiErrorBody } from "./errors.js";

type Page<T> = { data: T[]; has_more: boolean; next_page?: string };
type PageResult<T> = { data?: Page<T>; error?: ApiErrorBody; response: Response };

/**
 * Every item of a list, page after page:
 * `for await (const p of pages((after) => client.GET("/v1/projects", { params: { query: { after } } })))`.
 */
export async function* pages<T>(
  fetchPage: (after: string | undefined) => Promise<PageResult<T>>,
): AsyncGenerator<T> {
  let after: string | undefined;
  do {
    const result = await fetchPage(after);
    if (!result.data) throw ApiError.from(result);
    yield* result.data.data;
    after = result.data.has_more ? result.data.next_page : undefined;
  } while (after !== undefined);
}
