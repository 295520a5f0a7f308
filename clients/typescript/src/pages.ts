import { type ApiErrorBody, unwrapData } from "./errors.js";

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
    const page = unwrapData(await fetchPage(after));
    yield* page.data;
    after = page.has_more ? page.next_page : undefined;
  } while (after !== undefined);
}
