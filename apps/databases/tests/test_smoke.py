def test_smoke(tdb, sql):
    r = tdb.add({"title": "hello", "count": 3, "tags": ["a", "b"], "due": "2024-01-02T03:04:05Z"})
    assert r.status_code == 201, r.text
    row = r.json()
    print(row)
    assert row["$sequence"].isdigit()
    r = tdb.call("GET", tdb.R + "/" + row["$id"])
    assert r.status_code == 200, r.text
    r = tdb.call("GET", tdb.R, params={"queries[0]": '{"method":"equal","attribute":"title","values":["hello"]}'})
    assert r.status_code == 200, r.text
    assert r.json()["total"] == 1
    r = tdb.call("GET", tdb.T)
    assert r.status_code == 200, r.text
    print(r.json())
    assert tdb.count(sql) == 1
