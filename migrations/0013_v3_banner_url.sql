-- 0013: users.banner_url for users last seen through a v3 endpoint.
--
-- Production's v3 User has no `banner` field; its `profile_background_image_url` holds the
-- profile banner (https://pbs.twimg.com/profile_banners/<user id>/<version>), the image v2 calls
-- `banner` and stores in banner_url. The reader now fills banner_url from such an address
-- (src/api-client/normalize-user.ts, bannerOf), so the column means the same whatever endpoint
-- saw the user. Rows stored before have it only in profile_background_image_url: copied here.
UPDATE users
   SET banner_url = profile_background_image_url
 WHERE banner_url IS NULL
   AND profile_background_image_url LIKE '%/profile_banners/%';

COMMENT ON COLUMN users.banner_url IS
  'Profile banner URL: v2''s banner, or v3''s profile_background_image_url when that is a profile_banners address (production sends the banner there).';
