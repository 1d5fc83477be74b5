"""Sample check-in file contents shared by the loader tests."""

from __future__ import annotations

# Original Foursquare TSMC2014 layout: tab-separated, no header, 8 fields.
# Lines (1-based): 1-2 user 2 (out of time order), 3-6 user 1 with a repeated
# (user, time) pair on lines 4 and 5 (other venue) and an exact repeat on line 6.
FOURSQUARE_TSV = (
    "2\tv-b1\tc-1\tCafé\t35.70\t139.77\t540\tSat Dec 08 06:10:19 +0000 2012\n"
    "2\tv-b0\tc-2\tTrain Station\t35.69\t139.76\t540\tSat Dec 08 05:56:34 +0000 2012\n"
    "1\tv-a0\tc-3\tOffice\t35.60\t139.70\t540\tTue Apr 03 18:00:09 +0000 2012\n"
    "1\tv-a1\tc-1\tCafé\t35.61\t139.71\t540\tWed Apr 04 01:00:00 +0000 2012\n"
    "1\tv-a2\tc-4\tPark\t35.62\t139.72\t600\tWed Apr 04 01:00:00 +0000 2012\n"
    "1\tv-a1\tc-1\tCafé\t35.61\t139.71\t540\tWed Apr 04 01:00:00 +0000 2012\n"
)
FOURSQUARE_HEADER = ("User ID,Venue ID,Venue Category,Venue Name,Latitude,Longitude,"
                     "Timezone,UTC Time\n")

# SNAP Gowalla layout: tab-separated, no header: user, ISO time, lat, lng, location id.
GOWALLA_TSV = (
    "0\t2010-10-19T23:55:27Z\t30.2359091167\t-97.7951395833\t22847\n"
    "0\t2010-10-18T22:17:43Z\t30.2691029532\t-97.7493953705\t420315\n"
    "1\t2010-10-17T23:42:03Z\t30.2557309927\t-97.7633857727\t316637\n"
)


def to_csv(tsv: str, header: str) -> str:
    return header + tsv.replace("\t", ",")
