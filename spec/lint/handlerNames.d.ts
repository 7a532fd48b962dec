/** Types of ./handlerNames.js (plain JavaScript, so that Redocly's plugin can import it too). */
export declare function handlerName(operationId: string): string;
export declare function handlerNameClashes(operationIds: readonly string[]): Array<{ ids: string[]; name: string }>;
