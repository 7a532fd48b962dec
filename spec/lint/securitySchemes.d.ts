/** Types of ./securitySchemes.js (plain JavaScript, so that Redocly's plugin can import it too). */
export declare function unsupportedSchemeReason(scheme: unknown): string | undefined;
export type Challenge = 'Bearer' | 'Basic';
export declare const REALM: string;
export declare function schemeChallenge(scheme: unknown): Challenge | undefined;
export declare function challengeFor(challenges: ReadonlyArray<Challenge | undefined>, invalid: boolean): string;
export declare function carriesToken(scheme: unknown): boolean;
