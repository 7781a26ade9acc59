/** Id schemas of job params. Ids stay strings end to end (ARCHITECTURE invariant 5). */
import { z } from 'zod';

/** A tweet or user id: a positive int64 in decimal, at most 20 digits. */
export const snowflakeId = z.string().regex(/^[1-9]\d{0,19}$/, 'a numeric id');

/** A list or community id: decimal digits (the service does not bound them to int64). */
export const numericId = z.string().regex(/^[1-9]\d{0,24}$/, 'a numeric id');
