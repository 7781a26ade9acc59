/**
 * Job params refuse, when a job is queued, exactly what the client would refuse before sending:
 * an id past int64 (or with a leading zero) and a link that is not http(s). Accepted here and
 * refused by the client, one such id used to fail its slice, then the whole job, after the job was
 * queued successfully.
 */
import { describe, expect, it } from 'vitest';
import { numericId, snowflakeId } from '../../src/jobs/kinds/ids.ts';
import { UserTarget } from '../../src/jobs/kinds/user.ts';

describe('ids in job params', () => {
  it.each(['1', '2106875074404417536', '9223372036854775807'])('accepts the canonical int64 %s', (id) => {
    expect(snowflakeId.safeParse(id).success).toBe(true);
    expect(numericId.safeParse(id).success).toBe(true);
  });

  it.each(['0', '01', '-1', '9223372036854775808', '99999999999999999999', '1'.repeat(25), '12a'])('refuses %s', (id) => {
    expect(snowflakeId.safeParse(id).success).toBe(false);
    expect(numericId.safeParse(id).success).toBe(false);
  });

  it('a user link must be http(s)', () => {
    expect(UserTarget.safeParse({ userLink: 'https://x.com/jack' }).success).toBe(true);
    expect(UserTarget.safeParse({ userLink: 'ftp://x.com/jack' }).success).toBe(false);
    expect(UserTarget.safeParse({ userLink: 'file:///etc/passwd' }).success).toBe(false);
  });
});
