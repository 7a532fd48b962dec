/**
 * What a handler gets for bytes it was sent: a raw body (`image/png`, `application/octet-stream`)
 * or a file part of a multipart body, read to its end within its limit.
 */
export interface Upload {
  bytes: Buffer;
  size: number;
  /** As the client declared it, without parameters (a part without a Content-Type: `application/octet-stream`). */
  mediaType: string;
  /** A file part's `filename`, without any path; undefined for a raw body. */
  fileName: string | undefined;
}
