"""The genetic-algorithm scheduler of Lee's utility paper (sec. 6): queue orders searched for utility.

``problem`` holds one step's arrays, ``kernels`` the compiled fitness and breeding,
``search`` the generations, ``policy`` the ``ga`` policy around them.
"""
