-- 0013: users stored from v3 shapes.
--
-- 1. banner_url for users last seen through a v3 endpoint. Production's v3 User has no `banner`
--    field; its `profile_background_image_url` holds the profile banner
--    (https://pbs.twimg.com/profile_banners/<user id>/<version>), the image v2 calls `banner` and
--    stores in banner_url. The reader now fills banner_url from such an address
--    (src/api-client/normalize-user.ts, bannerOf), so the column means the same whatever endpoint
--    saw the user. Rows stored before have it only in profile_background_image_url: copied here.
UPDATE users
   SET banner_url = profile_background_image_url
 WHERE banner_url IS NULL
   AND profile_background_image_url LIKE '%/profile_banners/%';

COMMENT ON COLUMN users.banner_url IS
  'Profile banner URL: v2''s banner, or v3''s profile_background_image_url when that is a profile_banners address (production sends the banner there).';

-- 2. The richness ranking knew neither v3 follower shape, so it ranked `v3-follower` (a full v3
--    User without `location`, from new-followers-7d / new-following-7d) with the reduced shapes,
--    and a later reduced record replaced its raw document. It now ranks as the readers do
--    (src/store/page-rows.ts, USER_RANK).
CREATE OR REPLACE FUNCTION harvest_user_source_rank(source text) RETURNS int
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE source WHEN 'v3' THEN 3 WHEN 'v3-follower' THEN 2 WHEN 'v2-embedded' THEN 2 WHEN 'v2-new-follower' THEN 2 ELSE 1 END;
COMMENT ON FUNCTION harvest_user_source_rank(text) IS
  'Richness of a user wire shape: v3 > v3-follower/v2-embedded/v2-new-follower > v2-basic/v3-reduced/v3-top-follower.';
COMMENT ON COLUMN users.source IS
  'Wire shape of the richest record stored in raw: v3, v3-follower, v2-embedded, v2-new-follower, v2-basic, v3-reduced or v3-top-follower.';
